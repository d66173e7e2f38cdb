// `service members set-role --app <app> --human <humanId> (--custom-role <a,b> | --clear-role)`:
// PATCH /v1/apps/:id/members/:humanId with `custom_roles`. Roles must be declared by the
// app's manifest (at most 8); --clear-role sends [] and makes them a plain member again.
import { boolFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_FLAG, HUMAN_FLAG, appTarget, memberPath, requiredFlag } from "./common.ts";

export const membersSetRole: Command = {
  noun: "members",
  verb: "set-role",
  summary: "set or clear a member's custom roles",
  description: "Roles must be declared in the app's manifest (`service members roles`), at most 8. The member stays signed in; the new roles apply to their next request.",
  flags: [
    APP_FLAG,
    HUMAN_FLAG,
    { name: "custom-role", kind: "string", value: "<a,b>", description: "comma-separated custom roles; replaces the member's roles" },
    { name: "clear-role", kind: "boolean", description: "remove every custom role (a plain member again)" },
  ],
  args: [],
  examples: ["service members set-role --app my-app --human h123 --custom-role writer,reviewer", "service members set-role --app my-app --human h123 --clear-role"],
  skillCheck: true,
  async run(ctx) {
    const humanId = requiredFlag(ctx, "human");
    const list = stringFlag(ctx.flags, "custom-role");
    const clear = boolFlag(ctx.flags, "clear-role");
    if ((list === undefined) === !clear) throw invalidArgs("Give exactly one of --custom-role <a,b> or --clear-role.", ctx.command);
    const roles = clear ? [] : list!.split(",").map((r) => r.trim());
    if (roles.some((r) => r === "")) throw invalidArgs(`--custom-role has an empty name in ${JSON.stringify(list)}.`, ctx.command, { flag: "--custom-role" });
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("PATCH", memberPath(t, humanId), { auth: t.auth, body: { custom_roles: roles } }));
  },
};
