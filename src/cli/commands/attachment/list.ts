// `service attachment list [--cursor] [--limit 1..100]`: GET /v1/attachments, your
// non-deleted attachments newest first, printed as the relay's { items, next_cursor }.
import { stringFlag } from "../../argv.ts";
import { wholeFlag } from "../credentials/common.ts";
import { query } from "../apps/common.ts";
import type { Command } from "../types.ts";
import { session } from "./common.ts";

export const attachmentList: Command = {
  noun: "attachment",
  verb: "list",
  summary: "your attachments, newest first (a page at a time)",
  flags: [
    { name: "cursor", kind: "string", value: "<cursor>", description: "the next_cursor of the previous page" },
    { name: "limit", kind: "string", value: "<n>", description: "items per page, 1..100 (default 50)" },
  ],
  args: [],
  examples: ["service attachment list --limit 10"],
  skillCheck: true,
  async run(ctx) {
    const limit = wholeFlag(ctx, "limit", 1, 100);
    const s = session(ctx);
    const params = query({ cursor: stringFlag(ctx.flags, "cursor"), limit: limit === undefined ? undefined : String(limit) });
    ctx.out.json(await s.relay.object("GET", `/v1/attachments${params}`, { auth: s.auth }));
  },
};
