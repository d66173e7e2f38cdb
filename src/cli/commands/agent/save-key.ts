// Shared by `agent register` and `agent set-key`: store a key under a profile (with the
// relay URL it belongs to) and make that profile the current one, saying so on stderr
// when that switches away from another profile, so later commands do not surprise.
import type { CommandContext } from "../types.ts";

export function saveKey(ctx: Pick<CommandContext, "store" | "out">, profile: string, url: string, apiKey: string): string {
  const config = ctx.store.readConfig();
  const previous = config.current_profile;
  config.profiles[profile] = { ...config.profiles[profile], url, api_key: apiKey };
  config.current_profile = profile;
  ctx.store.writeConfig(config);
  if (previous && previous !== profile && config.profiles[previous]) {
    ctx.out.warn(`the current profile is now ${JSON.stringify(profile)} (it was ${JSON.stringify(previous)}); switch back with \`service config use ${previous}\`.`);
  }
  return ctx.store.configPath;
}
