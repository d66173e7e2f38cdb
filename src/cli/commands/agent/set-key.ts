// `service agent set-key <api-key>`: save a key the agent already has (for example one
// from `key mint` or from the console's rotate) into a profile. No network call. `-`
// reads the key from stdin; a literal key works but warns.
import { invalidArgs } from "../../errors.ts";
import { keyPrefix } from "../../context.ts";
import { secretValue } from "../../input.ts";
import type { Command } from "../types.ts";
import { saveKey } from "./save-key.ts";

export const agentSetKey: Command = {
  noun: "agent",
  verb: "set-key",
  summary: "save an existing API key to a profile (no network call)",
  description: "The key is saved with the relay URL (--url, SERVICE_URL, the profile's url, or the default)\nand the profile becomes the current one. Prefer `-` and pipe the key on stdin.",
  flags: [],
  args: [{ name: "api-key", required: true, description: "the key (svc_…), or - to read it from stdin" }],
  examples: ["printenv MY_KEY | service agent set-key - --profile work"],
  skillCheck: false,
  async run(ctx) {
    const resolved = ctx.resolve({ allowMissingProfile: true });
    const key = await secretValue(ctx, ctx.args[0], "API key", "pipe it instead: `... | service agent set-key -`.");
    if (!key || /\s/.test(key)) throw invalidArgs("The API key must be one word without spaces.", ctx.command);
    const savedTo = saveKey(ctx, resolved.profile, resolved.url, key);
    ctx.out.json({ saved_to: savedTo, profile: resolved.profile, key_prefix: keyPrefix(key) });
  },
};
