// `service config show`: which relay, key and profile a command would use right now and
// where each comes from (flag, env, profile/store, none). Local only; the key is masked.
import { maskKey } from "../../context.ts";
import type { Command } from "../types.ts";

export const configShow: Command = {
  noun: "config",
  verb: "show",
  summary: "show the URL, key (masked) and profile in effect, with their sources",
  flags: [],
  args: [],
  skillCheck: false,
  async run(ctx) {
    const r = ctx.resolve();
    ctx.out.json({
      url: r.url,
      url_source: r.urlSource,
      key_prefix: maskKey(r.apiKey, "show"),
      key_source: r.keySource,
      profile: r.profile,
      profile_source: r.profileSource,
      config_path: ctx.store.configPath,
    });
  },
};
