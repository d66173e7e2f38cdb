// `service skill version [--plain]`: the version of the relay's skill document, as
// `{ version }` or the bare string. Warns on stderr when it is newer than the copy last
// read with `service skill show` from the same relay (spec B, Versioning rule 5).
import { boolFlag } from "../../argv.ts";
import { compareWithRead, SKILL_VERSION_PATH, versionFrom } from "../../skill-freshness.ts";
import type { Command } from "../types.ts";

export const skillVersion: Command = {
  noun: "skill",
  verb: "version",
  summary: "print the skill document's version (no key needed)",
  flags: [{ name: "plain", kind: "boolean", description: "print the bare version string instead of JSON" }],
  args: [],
  skillCheck: false,
  async run(ctx) {
    const resolved = ctx.resolve();
    const relay = ctx.relay(resolved.url);
    const version = versionFrom(await relay.json("GET", SKILL_VERSION_PATH));
    if (boolFlag(ctx.flags, "plain")) ctx.out.text(version);
    else ctx.out.json({ version });
    compareWithRead(ctx.store, relay.baseUrl, version, ctx.out);
  },
};
