// `service publisher claim <handle>`: claim your human's permanent publisher handle
// (POST /v1/publisher/claim). Handles never change once claimed; the relay needs your
// human's email verified. Prints the PublisherProfile.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

export const publisherClaim: Command = {
  noun: "publisher",
  verb: "claim",
  summary: "claim your permanent publisher handle (3-32 lowercase letters, digits, inner hyphens)",
  flags: [],
  args: [{ name: "handle", required: true, description: "the handle: your templates install as <handle>/<slug>" }],
  examples: ["service publisher claim acme-apps"],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", "/v1/publisher/claim", { auth: s.auth, body: { handle: ctx.args[0] } }));
  },
};
