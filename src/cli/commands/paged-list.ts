// One shape for the CLI's account-wide paged lists (`feedback list`, `attachment list`,
// `template list-pending`): a --limit flag checked against the route's range, the page
// flag the route reads (`--cursor` or `--before`), one GET, and the relay's page printed
// as it came. Each command states only what differs: its path, its range and its words.
import { stringFlag } from "../argv.ts";
import type { Command } from "./types.ts";
import { query, session } from "./apps/common.ts";
import { wholeFlag } from "./credentials/common.ts";

export interface PagedListSpec {
  noun: string;
  verb: string;
  summary: string;
  /** The route, e.g. `/v1/feedback`. */
  path: string;
  /** The query parameter (and flag) that carries the previous page's cursor. */
  pageParam: "cursor" | "before";
  /** The response field that holds the next page's cursor, named in the flag's help. */
  nextField: string;
  /** The route's page-size range. */
  limit: { max: number; fallback: number };
  examples: string[];
}

export function pagedListCommand(spec: PagedListSpec): Command {
  return {
    noun: spec.noun,
    verb: spec.verb,
    summary: spec.summary,
    flags: [
      { name: "limit", kind: "string", value: "<n>", description: `items per page, 1..${spec.limit.max} (default ${spec.limit.fallback})` },
      { name: spec.pageParam, kind: "string", value: "<cursor>", description: `the ${spec.nextField} of the previous page` },
    ],
    args: [],
    examples: spec.examples,
    skillCheck: true,
    async run(ctx) {
      const limit = wholeFlag(ctx, "limit", 1, spec.limit.max);
      const relaySession = session(ctx);
      const params = query({ limit: limit === undefined ? undefined : String(limit), [spec.pageParam]: stringFlag(ctx.flags, spec.pageParam) });
      ctx.out.json(await relaySession.relay.object("GET", `${spec.path}${params}`, { auth: relaySession.auth }));
    },
  };
}
