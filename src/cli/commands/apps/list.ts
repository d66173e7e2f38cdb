// `service apps list`: my apps, newest activity first (GET /v1/apps). Without --status the
// relay lists every status except deleted; the page is the relay's { items, next_cursor }.
import { stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { LIST_FLAGS, STATUSES, limitFlag, oneOf, query, session } from "./common.ts";

export const appsList: Command = {
  noun: "apps",
  verb: "list",
  summary: "list your apps (default: every status but deleted)",
  flags: [
    { name: "status", kind: "string", value: `<${STATUSES.join("|")}>`, description: "only apps in this status (all: including deleted)" },
    ...LIST_FLAGS,
    { name: "slug", kind: "string", value: "<slug>", description: "only the app with exactly this slug" },
  ],
  args: [],
  examples: ["service apps list", "service apps list --status all --limit 10"],
  skillCheck: true,
  async run(ctx) {
    const status = oneOf(ctx, "status", STATUSES);
    const limit = limitFlag(ctx);
    const s = session(ctx);
    const q = query({ status, limit, cursor: stringFlag(ctx.flags, "cursor"), slug: stringFlag(ctx.flags, "slug") });
    ctx.out.json(await s.relay.object("GET", `/v1/apps${q}`, { auth: s.auth }));
  },
};
