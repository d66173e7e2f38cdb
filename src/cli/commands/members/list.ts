// `service members list --app <app>`: GET /v1/apps/:id/members — the owner (role owner)
// first, then the members with their custom roles.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const membersList: Command = {
  noun: "members",
  verb: "list",
  summary: "list the app's owner and members with their roles",
  flags: [APP_FLAG],
  args: [],
  examples: ["service members list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/members`, { auth: t.auth }));
  },
};
