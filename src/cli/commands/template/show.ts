// `service template show <snapshot-id>`: one submission whole for review (GET
// /v1/community/submissions/<id>): HTML, manifest, seed rows, setup steps and the
// destinations the app would send data to.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { SNAPSHOT_ARG, submissionPath } from "./submission.ts";

export const templateShow: Command = {
  noun: "template",
  verb: "show",
  summary: "a submission in full: HTML, manifest, seed rows, external destinations (operators only)",
  flags: [],
  args: [SNAPSHOT_ARG],
  examples: ["service template show tpl_…"],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("GET", submissionPath(ctx.args[0]), { auth: s.auth }));
  },
};
