// `service skill show`: print the relay's skill document (the agent's guide) as raw
// markdown, and remember its version so later commands can tell when it changed.
import { markerVersion, recordRead, SKILL_PATH, SKILL_VERSION_PATH, versionFrom } from "../../skill-freshness.ts";
import type { Command } from "../types.ts";

export const skillShow: Command = {
  noun: "skill",
  verb: "show",
  summary: "print the relay's skill document (raw markdown, no key needed)",
  flags: [],
  args: [],
  skillCheck: false,
  async run(ctx) {
    const resolved = ctx.resolve();
    const relay = ctx.relay(resolved.url);
    const markdown = await relay.text("GET", SKILL_PATH);
    ctx.out.text(markdown);
    let version = markerVersion(markdown);
    if (!version) {
      try {
        version = versionFrom(await relay.json("GET", SKILL_VERSION_PATH, { timeoutMs: 5000 }));
      } catch {
        version = null;
      }
    }
    if (version) recordRead(ctx.store, relay.baseUrl, version);
  },
};
