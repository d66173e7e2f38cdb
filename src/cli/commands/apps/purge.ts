// `service apps purge <app> --yes`: destroy a deleted app for good (POST
// /v1/apps/:id/purge): rows, feed and records. Only apps in the trash can be purged.
// Without --yes it refuses with invalid_args, like `apps delete`.
import { boolFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsPurge: Command = {
  noun: "apps",
  verb: "purge",
  summary: "destroy a deleted app and its data irreversibly (needs --yes)",
  flags: [{ name: "yes", kind: "boolean", description: "confirm the purge" }],
  args: [APP_ARG],
  examples: ["service apps purge my-app --yes"],
  skillCheck: true,
  async run(ctx) {
    if (!boolFlag(ctx.flags, "yes")) {
      throw invalidArgs(`Purging destroys the app and its data for good. Run \`service apps purge ${ctx.args[0]} --yes\` if you mean it.`, ctx.command);
    }
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/purge`, { auth: t.auth }));
  },
};
