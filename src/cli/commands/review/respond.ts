// `service review respond <id> (--response <text> | --clear)`: answer a review of your
// template as its publisher, or clear the answer (POST /v1/reviews/:id/respond).
import { boolFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { REVIEW_ARG, reviewPath } from "./common.ts";

export const reviewRespond: Command = {
  noun: "review",
  verb: "respond",
  summary: "answer a review of your template (publisher only), or --clear the answer",
  flags: [
    { name: "response", kind: "string", value: "<text>", description: "your answer (at most 2000 characters)" },
    { name: "clear", kind: "boolean", description: "remove your answer" },
  ],
  args: [REVIEW_ARG],
  examples: ["service review respond rev_… --response \"Thanks, fixed in 1.1.0\"", "service review respond rev_… --clear"],
  skillCheck: true,
  async run(ctx) {
    const response = stringFlag(ctx.flags, "response");
    const clear = boolFlag(ctx.flags, "clear");
    if ((response === undefined) === !clear) throw invalidArgs("Give exactly one of --response <text> or --clear.", ctx.command, { flag: "--response" });
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", reviewPath(ctx.args[0], "respond"), { auth: s.auth, body: { response: clear ? null : response } }));
  },
};
