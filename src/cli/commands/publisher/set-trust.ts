// `service publisher set-trust <handle> <new|established>`: an operator sets a
// publisher's trust level (POST /v1/community/publishers/<handle>/trust). An established
// publisher's submissions are approved on arrival while they reach no new destination.
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

const LEVELS = ["new", "established"];

export const publisherSetTrust: Command = {
  noun: "publisher",
  verb: "set-trust",
  summary: "set a publisher's trust level (operators only)",
  flags: [],
  args: [
    { name: "handle", required: true, description: "the publisher's handle" },
    { name: "level", required: true, description: "new or established" },
  ],
  examples: ["service publisher set-trust acme-apps established"],
  skillCheck: true,
  async run(ctx) {
    const [handle, level] = ctx.args;
    if (!LEVELS.includes(level)) throw invalidArgs(`The level must be new or established; got ${JSON.stringify(level)}.`, ctx.command, { arg: "level" });
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", `/v1/community/publishers/${encodeURIComponent(handle)}/trust`, { auth: s.auth, body: { trust_level: level } }));
  },
};
