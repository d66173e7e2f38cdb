// `service taste get`: your taste notes as the relay keeps them (GET /v1/taste):
// { taste, updated_at, bytes }, with taste null when none are set.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

export const tasteGet: Command = {
  noun: "taste",
  verb: "get",
  summary: "print your taste notes ({ taste, updated_at, bytes }; taste is null when none are set)",
  flags: [],
  args: [],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("GET", "/v1/taste", { auth: s.auth }));
  },
};
