// `service config rm <profile>`: delete a saved profile. Local only; the key is not revoked.
import { CliError } from "../../errors.ts";
import { checkProfileName } from "../../context.ts";
import type { Command } from "../types.ts";

export const configRm: Command = {
  noun: "config",
  verb: "rm",
  summary: "delete a saved profile (its key is not revoked)",
  flags: [],
  args: [{ name: "profile", required: true, description: "name of a saved profile" }],
  skillCheck: false,
  async run(ctx) {
    const name = checkProfileName(ctx.args[0], "the argument", ctx.command);
    const config = ctx.store.readConfig();
    if (!Object.hasOwn(config.profiles, name)) {
      throw new CliError("config_error", `There is no profile named ${JSON.stringify(name)}.`, { hint: "List profiles with `service config list`." });
    }
    delete config.profiles[name];
    const wasCurrent = config.current_profile === name;
    if (wasCurrent) config.current_profile = null;
    ctx.store.writeConfig(config);
    ctx.out.json({ profile: name, was_current: wasCurrent, path: ctx.store.configPath });
  },
};
