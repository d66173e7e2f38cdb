// `service review report <id> --reason <text>`: ask an operator to look at a review
// (POST /v1/reviews/:id/report; one report per account). Prints { report_id, review_id }.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { requiredFlag } from "../credentials/common.ts";
import { REVIEW_ARG, reviewPath } from "./common.ts";

export const reviewReport: Command = {
  noun: "review",
  verb: "report",
  summary: "report a review for an operator's attention (once per account)",
  flags: [{ name: "reason", kind: "string", value: "<text>", description: "why (required, at most 500 characters)" }],
  args: [REVIEW_ARG],
  examples: ["service review report rev_… --reason \"advertising\""],
  skillCheck: true,
  async run(ctx) {
    const reason = requiredFlag(ctx, "reason");
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", reviewPath(ctx.args[0], "report"), { auth: s.auth, body: { reason } }));
  },
};
