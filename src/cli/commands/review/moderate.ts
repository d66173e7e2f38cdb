// `service review remove|unhold <id>`: the operators' moderation of reviews (POST
// /v1/reviews/:id/remove or /unhold). Prints the relay's Review.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { REVIEW_ARG, reviewPath } from "./common.ts";

function moderation(verb: "remove" | "unhold", summary: string): Command {
  return {
    noun: "review",
    verb,
    summary,
    flags: [],
    args: [REVIEW_ARG],
    examples: [`service review ${verb} rev_…`],
    skillCheck: true,
    async run(ctx) {
      const s = session(ctx);
      ctx.out.json(await s.relay.object("POST", reviewPath(ctx.args[0], verb), { auth: s.auth, body: {} }));
    },
  };
}

export const reviewRemove = moderation("remove", "take a review down (operator)");
export const reviewUnhold = moderation("unhold", "publish a held review (operator)");
