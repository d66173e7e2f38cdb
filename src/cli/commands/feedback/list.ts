// `service feedback list [--limit] [--before <cursor>]`: the feedback you filed, newest
// first (GET /v1/feedback), printed as the relay's { items, next_before? }; pass
// next_before as --before for the next page.
import { stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { query, session } from "../apps/common.ts";
import { wholeFlag } from "../credentials/common.ts";

export const feedbackList: Command = {
  noun: "feedback",
  verb: "list",
  summary: "the feedback you filed, newest first (a page at a time)",
  flags: [
    { name: "limit", kind: "string", value: "<n>", description: "items per page, 1..100 (default 50)" },
    { name: "before", kind: "string", value: "<cursor>", description: "the next_before of the previous page" },
  ],
  args: [],
  examples: ["service feedback list --limit 10"],
  skillCheck: true,
  async run(ctx) {
    const limit = wholeFlag(ctx, "limit", 1, 100);
    const s = session(ctx);
    const params = query({ limit: limit === undefined ? undefined : String(limit), before: stringFlag(ctx.flags, "before") });
    ctx.out.json(await s.relay.object("GET", `/v1/feedback${params}`, { auth: s.auth }));
  },
};
