// `service key mint`: mint a sibling key for the same agent (POST /v1/keys). The relay
// shows the new key once, so the CLI prints the relay's body as is, including api_key,
// and saves nothing; store it with `service agent set-key -` if you want to use it.
import { requireKey } from "../../context.ts";
import type { Command } from "../types.ts";

export const keyMint: Command = {
  noun: "key",
  verb: "mint",
  summary: "mint a sibling key (printed once, not saved)",
  description: "The output includes the new full api_key: it is shown only this once.\nSave it with `service agent set-key - --profile <name>` if you want a profile for it.",
  flags: [],
  args: [],
  skillCheck: true,
  async run(ctx) {
    const resolved = ctx.resolve();
    const key = requireKey(resolved);
    ctx.out.json(await ctx.relay(resolved.url).object("POST", "/v1/keys", { auth: { kind: "key", key } }));
  },
};
