// `service template reject <snapshot-id> --note <text>`: turn a submission down (POST
// …/reject). The note is required; the publisher finds it as a notice on the app they
// published from.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { requiredFlag } from "../credentials/common.ts";
import { SNAPSHOT_ARG, submissionPath } from "./submission.ts";

export const templateReject: Command = {
  noun: "template",
  verb: "reject",
  summary: "reject a submission with a note for its publisher (operators only)",
  flags: [{ name: "note", kind: "string", value: "<text>", description: "why, in words the publisher can act on (required)" }],
  args: [SNAPSHOT_ARG],
  examples: ['service template reject tpl_… --note "Add a description of what the app does."'],
  skillCheck: true,
  async run(ctx) {
    const note = requiredFlag(ctx, "note");
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", submissionPath(ctx.args[0], "reject"), { auth: s.auth, body: { note } }));
  },
};
