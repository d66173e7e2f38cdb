// `service template unpublish <snapshot-id>`: take your own template out of the gallery,
// search and install link (POST …/unpublish; idempotent; existing installs keep working).
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { SNAPSHOT_ARG, submissionPath } from "./submission.ts";

export const templateUnpublish: Command = {
  noun: "template",
  verb: "unpublish",
  summary: "take your own template listing down (existing installs keep working)",
  flags: [],
  args: [SNAPSHOT_ARG],
  examples: ["service template unpublish tpl_…"],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", submissionPath(ctx.args[0], "unpublish"), { auth: s.auth }));
  },
};
