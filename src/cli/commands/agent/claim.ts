// `service agent claim <code>`: redeem a claim code minted by a human in the console,
// binding this (directly registered) agent to that human for good. Per WIRE §1.1 this
// call does not send x-service-cli-version.
import { requireKey } from "../../context.ts";
import type { Command } from "../types.ts";

export const agentClaim: Command = {
  noun: "agent",
  verb: "claim",
  summary: "bind this agent to the human who minted a claim code (cc_…)",
  description: "Claim codes are minted in the owner console, work once and expire after 15 minutes.\nThe binding is one-way; the key keeps working.",
  flags: [],
  args: [{ name: "code", required: true, description: "the claim code from your human, cc_…" }],
  examples: ["service agent claim cc_0123456789abcdef"],
  skillCheck: true,
  async run(ctx) {
    const resolved = ctx.resolve();
    const key = requireKey(resolved);
    const body = await ctx.relay(resolved.url).object("POST", "/v1/agents/claim", {
      auth: { kind: "key", key },
      body: { code: ctx.args[0].trim() },
      sendVersion: false,
    });
    ctx.out.json(body);
  },
};
