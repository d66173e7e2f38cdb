// `service data <app> <collection> list`: a page of rows (GET …/collections/:name) with
// optional --where / --sort sent as q = URL-encoded JSON { where, sort } (only the parts
// given), --since = the previous page's next_cursor (send the same --sort again), and
// --all, which follows next_cursor to the end and prints every row in one
// { rows, next_cursor: null, has_more: false }.
import { boolFlag, stringFlag } from "../../argv.ts";
import { CliError } from "../../errors.ts";
import { argError, intFlag, type DataContext, type DataVerb } from "./common.ts";

/** Stops --all on a relay that keeps answering has_more (a bug), not on a big collection. */
const MAX_PAGES = 10_000;

function jsonList(ctx: DataContext, flag: string, single: (v: Record<string, unknown>) => boolean): unknown[] | undefined {
  const raw = stringFlag(ctx.flags, flag);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw argError(`--${flag} is not valid JSON: ${(err as Error).message}`, `--${flag}`);
  }
  if (Array.isArray(value)) return value;
  if (typeof value === "object" && value !== null && single(value as Record<string, unknown>)) return [value];
  throw argError(`--${flag} must be a JSON array${flag === "where" ? " of { field, op, value }" : " of { field, dir? }"} (or one such object).`, `--${flag}`);
}

export const dataList: DataVerb = {
  verb: "list",
  usage: "list [--where <json>] [--sort <json>] [--limit <n>] [--since <cursor>] [--all]",
  summary: "list rows: { rows, next_cursor, has_more }",
  key: "none",
  flags: [
    { name: "where", kind: "string", value: "<json>", description: "list: conditions, e.g. '[{\"field\":\"done\",\"op\":\"eq\",\"value\":false}]' (ANDed)" },
    { name: "sort", kind: "string", value: "<json>", description: "list: order, e.g. '[{\"field\":\"due\",\"dir\":\"desc\"}]'" },
    { name: "limit", kind: "string", value: "<n>", description: "list: rows per page, 1 to 1000 (relay default 100); deleted: 1 to 1000 (default 100)" },
    { name: "since", kind: "string", value: "<cursor>", description: "list: next_cursor of the previous page (repeat the same --sort)" },
    { name: "all", kind: "boolean", description: "list: follow next_cursor and print every row" },
  ],
  async run(ctx) {
    const where = jsonList(ctx, "where", (v) => "field" in v);
    const sort = jsonList(ctx, "sort", (v) => "field" in v);
    const limit = intFlag(ctx, "limit", 1, 1000);
    let since = stringFlag(ctx.flags, "since");
    const q: Record<string, unknown> = {};
    if (where && where.length > 0) q.where = where;
    if (sort && sort.length > 0) q.sort = sort;
    const t = await ctx.open();
    const page = async () => {
      const params = new URLSearchParams();
      if (since !== undefined) params.set("since", since);
      if (limit !== undefined) params.set("limit", String(limit));
      if (Object.keys(q).length > 0) params.set("q", JSON.stringify(q));
      const query = params.toString();
      return t.relay.object("GET", `${t.base}${query ? `?${query}` : ""}`, { auth: t.auth });
    };
    if (!boolFlag(ctx.flags, "all")) {
      ctx.out.json(await page());
      return;
    }
    const rows: unknown[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < MAX_PAGES; i++) {
      const body = await page();
      if (!Array.isArray(body.rows)) throw new CliError("invalid_response", "The relay's row list has no rows array.", { details: { keys: Object.keys(body) } });
      rows.push(...body.rows);
      const next = typeof body.next_cursor === "string" && body.next_cursor ? body.next_cursor : null;
      if (!next || body.has_more === false) {
        ctx.out.json({ rows, next_cursor: null, has_more: false });
        return;
      }
      if (seen.has(next)) throw new CliError("invalid_response", "The relay answered the same next_cursor twice; stopping --all.", { details: { next_cursor: next } });
      seen.add(next);
      since = next;
    }
    throw new CliError("invalid_response", `--all stopped after ${MAX_PAGES} pages without reaching the end.`);
  },
};
