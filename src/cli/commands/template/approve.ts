// `service template approve <snapshot-id>`: list a submission in the gallery (POST
// …/approve); earlier approved versions of its slug become superseded.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { SNAPSHOT_ARG, submissionPath } from "./submission.ts";

export const templateApprove: Command = {
  noun: "template",
  verb: "approve",
  summary: "approve a submission into the gallery (operators only)",
  flags: [],
  args: [SNAPSHOT_ARG],
  examples: ["service template approve tpl_…"],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", submissionPath(ctx.args[0], "approve"), { auth: s.auth }));
  },
};
