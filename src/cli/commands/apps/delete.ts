// `service apps delete <app> --yes`: move the app to the trash (DELETE /v1/apps/:id);
// its data is kept until purged and `apps restore` brings it back. Without --yes it
// refuses with invalid_args (WIRE §6.7) and touches nothing.
import { boolFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsDelete: Command = {
  noun: "apps",
  verb: "delete",
  summary: "move an app to the trash (needs --yes); `apps restore` undoes it",
  flags: [{ name: "yes", kind: "boolean", description: "confirm the deletion" }],
  args: [APP_ARG],
  examples: ["service apps delete my-app --yes"],
  skillCheck: true,
  async run(ctx) {
    if (!boolFlag(ctx.flags, "yes")) {
      throw invalidArgs(`Deleting takes the app offline. Run \`service apps delete ${ctx.args[0]} --yes\` if you mean it.`, ctx.command);
    }
    const t = await target(ctx, ctx.args[0]);
    await t.relay.json("DELETE", t.path, { auth: t.auth });
    ctx.out.json({ deleted: true, app_id: t.app.id });
  },
};
