// `service config use <profile>`: make a saved profile the current one. Local only.
import { CliError } from "../../errors.ts";
import { checkProfileName } from "../../context.ts";
import type { Command } from "../types.ts";

export const configUse: Command = {
  noun: "config",
  verb: "use",
  summary: "make a saved profile the current one",
  flags: [],
  args: [{ name: "profile", required: true, description: "name of a saved profile" }],
  skillCheck: false,
  async run(ctx) {
    const name = checkProfileName(ctx.args[0], "the argument", ctx.command);
    const config = ctx.store.readConfig();
    if (!Object.hasOwn(config.profiles, name)) {
      throw new CliError("config_error", `There is no profile named ${JSON.stringify(name)}.`, { hint: "List profiles with `service config list`." });
    }
    config.current_profile = name;
    ctx.store.writeConfig(config);
    ctx.out.json({ profile: name, saved_to: ctx.store.configPath });
  },
};
