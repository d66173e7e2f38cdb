// `service apps deleted`: the apps in the trash (GET /v1/apps?status=deleted), as the
// relay's { items, next_cursor } page.
import { stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { LIST_FLAGS, limitFlag, query, session } from "./common.ts";

export const appsDeleted: Command = {
  noun: "apps",
  verb: "deleted",
  summary: "list the apps in the trash (restore or purge them)",
  flags: LIST_FLAGS,
  args: [],
  examples: ["service apps deleted"],
  skillCheck: true,
  async run(ctx) {
    const limit = limitFlag(ctx);
    const s = session(ctx);
    const q = query({ status: "deleted", limit, cursor: stringFlag(ctx.flags, "cursor") });
    ctx.out.json(await s.relay.object("GET", `/v1/apps${q}`, { auth: s.auth }));
  },
};
