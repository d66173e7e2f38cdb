// `service agent logout [--all]`: forget the key locally by removing the profile (or every
// profile). The key itself stays valid on the relay; `key revoke --yes` kills it.
import { boolFlag } from "../../argv.ts";
import type { Command } from "../types.ts";

export const agentLogout: Command = {
  noun: "agent",
  verb: "logout",
  summary: "remove the current profile (or all with --all) from the local config; the key is not revoked",
  flags: [{ name: "all", kind: "boolean", description: "remove every profile" }],
  args: [],
  examples: ["service agent logout", "service agent logout --all"],
  skillCheck: false,
  async run(ctx) {
    const path = ctx.store.configPath;
    if (boolFlag(ctx.flags, "all")) {
      ctx.store.writeConfig({ current_profile: null, profiles: {} });
      ctx.out.json({ cleared: true, profile: null, path });
      return;
    }
    const resolved = ctx.resolve();
    const config = ctx.store.readConfig();
    if (Object.hasOwn(config.profiles, resolved.profile)) {
      delete config.profiles[resolved.profile];
      if (config.current_profile === resolved.profile) config.current_profile = null;
      ctx.store.writeConfig(config);
    }
    ctx.out.json({ cleared: true, profile: resolved.profile, path });
  },
};
