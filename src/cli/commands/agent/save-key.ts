// Shared by `agent register` and `agent set-key`: store a key under a profile (with the
// relay URL it belongs to) and make that profile the current one.
import type { ConfigStore } from "../../config-store.ts";

export function saveKey(store: ConfigStore, profile: string, url: string, apiKey: string): string {
  const config = store.readConfig();
  config.profiles[profile] = { ...config.profiles[profile], url, api_key: apiKey };
  config.current_profile = profile;
  store.writeConfig(config);
  return store.configPath;
}
