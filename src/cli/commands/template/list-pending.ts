// `service template list-pending [--limit] [--cursor]`: the operator's review queue
// (GET /v1/community/pending), expedited first, then oldest first; prints { items,
// next_cursor }.
import { stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { query, session } from "../apps/common.ts";
import { wholeFlag } from "../credentials/common.ts";

export const templateListPending: Command = {
  noun: "template",
  verb: "list-pending",
  summary: "submissions waiting for review, expedited first (operators only)",
  flags: [
    { name: "limit", kind: "string", value: "<n>", description: "items per page, 1..200 (default 25)" },
    { name: "cursor", kind: "string", value: "<cursor>", description: "next_cursor from the previous page" },
  ],
  args: [],
  examples: ["service template list-pending --limit 10"],
  skillCheck: true,
  async run(ctx) {
    const limit = wholeFlag(ctx, "limit", 1, 200);
    const s = session(ctx);
    const params = query({ limit: limit === undefined ? undefined : String(limit), cursor: stringFlag(ctx.flags, "cursor") });
    ctx.out.json(await s.relay.object("GET", `/v1/community/pending${params}`, { auth: s.auth }));
  },
};
