// `service data <app> <collection> deleted [--limit <n>] [--before <cursor>]`: the
// recoverable rows, newest deletion first (GET …/deleted), as the relay's
// { rows, next_before }; pass next_before back with --before.
import { stringFlag } from "../../argv.ts";
import { intFlag, type DataVerb } from "./common.ts";

export const dataDeleted: DataVerb = {
  verb: "deleted",
  usage: "deleted [--limit <n>] [--before <cursor>]",
  summary: "soft-deleted rows, newest first: { rows, next_before }",
  key: "none",
  flags: [
    { name: "limit", kind: "string", value: "<n>", description: "deleted: rows per page, 1 to 1000 (default 100)" },
    { name: "before", kind: "string", value: "<cursor>", description: "deleted: next_before of the previous page" },
  ],
  async run(ctx) {
    const limit = intFlag(ctx, "limit", 1, 1000);
    const before = stringFlag(ctx.flags, "before");
    const t = await ctx.open();
    const params = new URLSearchParams();
    if (limit !== undefined) params.set("limit", String(limit));
    if (before !== undefined) params.set("before", before);
    const query = params.toString();
    ctx.out.json(await t.relay.object("GET", `${t.base}/deleted${query ? `?${query}` : ""}`, { auth: t.auth }));
  },
};
