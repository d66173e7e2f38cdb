// `service members list --app <app>`: GET /v1/apps/:id/members — the owner (role owner)
// first, then the members with their custom roles.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const membersList: Command = {
  noun: "members",
  verb: "list",
  summary: "list the app's owner and members with their roles",
  description: "Each member is { humanId, email, role, customRoles, customRole, createdAt }, camelCase as the\nrelay sends it. customRoles holds every custom role the member has; customRole is the older\nsingle-role view, the first of customRoles or null. Set roles with `service members set-role`.",
  flags: [APP_FLAG],
  args: [],
  examples: ["service members list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/members`, { auth: t.auth }));
  },
};
