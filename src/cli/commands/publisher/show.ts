// `service publisher show`: your human's publisher profile (GET /v1/publisher), with
// claimed:false and handle null until a handle is claimed.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

export const publisherShow: Command = {
  noun: "publisher",
  verb: "show",
  summary: "your publisher profile (handle, display fields, trust level, counts)",
  flags: [],
  args: [],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("GET", "/v1/publisher", { auth: s.auth }));
  },
};
