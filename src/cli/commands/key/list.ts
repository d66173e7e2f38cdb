// `service key list`: the caller's own key as the relay sees it (GET /v1/keys answers one
// object, not a list): prefix, creation, last use, revocation.
import { requireKey } from "../../context.ts";
import type { Command } from "../types.ts";

export const keyList: Command = {
  noun: "key",
  verb: "list",
  summary: "show your own key (prefix, created, last used, revoked)",
  flags: [],
  args: [],
  skillCheck: true,
  async run(ctx) {
    const resolved = ctx.resolve();
    const key = requireKey(resolved);
    ctx.out.json(await ctx.relay(resolved.url).object("GET", "/v1/keys", { auth: { kind: "key", key } }));
  },
};
