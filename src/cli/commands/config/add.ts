// `service config add <profile> --url <url> [--api-key <key|->]`: create or update a
// profile by hand. Local only. It becomes current only when no profile is current yet.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { checkProfileName, normaliseUrl } from "../../context.ts";
import { secretValue } from "../../input.ts";
import type { Command } from "../types.ts";

export const configAdd: Command = {
  noun: "config",
  verb: "add",
  summary: "create or update a profile: add <profile> --url <url> [--api-key <key|->]",
  description: "Here --url and --api-key are the values to store, not overrides. `--api-key -` reads the\nkey from stdin. The profile becomes current only if no profile is current yet.",
  flags: [],
  args: [{ name: "profile", required: true, description: "profile name: 1 to 32 of A-Z a-z 0-9 _ -" }],
  examples: ["service config add staging --url https://relay.example.com", "printenv KEY | service config add work --url http://localhost:8787 --api-key -"],
  skillCheck: false,
  async run(ctx) {
    const name = checkProfileName(ctx.args[0], "the argument", ctx.command);
    const rawUrl = stringFlag(ctx.flags, "url");
    if (rawUrl === undefined) throw invalidArgs("config add needs --url <url>.", ctx.command);
    const url = normaliseUrl(rawUrl, "--url", ctx.command);
    const rawKey = stringFlag(ctx.flags, "api-key");
    const config = ctx.store.readConfig();
    const profile = { ...config.profiles[name], url };
    if (rawKey !== undefined) {
      const key = rawKey === "-" ? await secretValue(ctx, rawKey, "API key", "") : rawKey.trim();
      if (!key || /\s/.test(key)) throw invalidArgs("The API key must be one word without spaces.", ctx.command);
      profile.api_key = key;
    }
    config.profiles[name] = profile;
    if (!config.current_profile || !Object.hasOwn(config.profiles, config.current_profile)) config.current_profile = name;
    ctx.store.writeConfig(config);
    ctx.out.json({ profile: name, saved_to: ctx.store.configPath });
  },
};
