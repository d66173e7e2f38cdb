// `service config list`: every saved profile with its URL and masked key. Local only.
import { maskKey } from "../../context.ts";
import type { ConfigFile } from "../../config-store.ts";
import type { Command } from "../types.ts";

export function listing(config: ConfigFile, configPath: string) {
  const names = Object.keys(config.profiles).sort();
  return {
    current: config.current_profile,
    profiles: names.map((name) => ({
      name,
      url: config.profiles[name].url ?? null,
      key_prefix: maskKey(config.profiles[name].api_key, "list"),
      current: name === config.current_profile,
    })),
    config_path: configPath,
  };
}

export const configList: Command = {
  noun: "config",
  verb: "list",
  summary: "list saved profiles (keys masked)",
  flags: [],
  args: [],
  skillCheck: false,
  async run(ctx) {
    ctx.out.json(listing(ctx.store.readConfig(), ctx.store.configPath));
  },
};
