// `service members roles --app <app>`: GET /v1/apps/:id/roles — each custom role the
// manifest declares, what it reaches per collection as a member and through a grant
// link, and how many members hold it.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const membersRoles: Command = {
  noun: "members",
  verb: "roles",
  summary: "the app's custom roles and what each may do per collection",
  flags: [APP_FLAG],
  args: [],
  examples: ["service members roles --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/roles`, { auth: t.auth }));
  },
};
