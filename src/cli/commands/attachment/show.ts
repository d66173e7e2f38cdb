// `service attachment show <id>`: GET /v1/attachments/<id>/metadata, the AttachmentRef as it is.
import type { Command } from "../types.ts";
import { attachmentId, attachmentPath, ID_ARG, session } from "./common.ts";

export const attachmentShow: Command = {
  noun: "attachment",
  verb: "show",
  summary: "an attachment's metadata (type, size, sha256, scope, status)",
  flags: [],
  args: [ID_ARG],
  examples: ["service attachment show att_…"],
  skillCheck: true,
  async run(ctx) {
    const id = attachmentId(ctx);
    const s = session(ctx);
    ctx.out.json(await s.relay.object("GET", `${attachmentPath(id)}/metadata`, { auth: s.auth }));
  },
};
