// `service members add --app <app> --email <address> [--role member]`: POST
// /v1/apps/:id/members. Someone with an account becomes a member at once (`{ member }`);
// anyone else is mailed an invitation (`{ ok, invited, expires_at }`), which needs a relay
// that can send mail (503 auth_provider_unavailable otherwise).
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, requiredFlag } from "./common.ts";

export const membersAdd: Command = {
  noun: "members",
  verb: "add",
  summary: "add a person by email (a member at once, or a mailed invitation)",
  description: "Only the member role can be given here; custom roles are set with `service members set-role`. An invitation works once, for 7 days, and only for that address.",
  flags: [
    APP_FLAG,
    { name: "email", kind: "string", value: "<address>", description: "the person's email address (required)" },
    { name: "role", kind: "string", value: "member", description: "the role to give: only member (the default)" },
  ],
  args: [],
  examples: ["service members add --app my-app --email friend@example.com"],
  skillCheck: true,
  async run(ctx) {
    const email = requiredFlag(ctx, "email");
    const role = stringFlag(ctx.flags, "role");
    if (role !== undefined && role !== "member") {
      throw invalidArgs(`--role can only be member (custom roles: \`service members set-role\`); got ${JSON.stringify(role)}.`, ctx.command, { flag: "--role" });
    }
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", `${t.path}/members`, { auth: t.auth, body: { email, role: "member" } }));
  },
};
