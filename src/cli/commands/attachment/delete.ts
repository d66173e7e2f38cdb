// `service attachment delete <id>`: DELETE /v1/attachments/<id> (soft delete, idempotent;
// its capability URLs stop working), printed as { attachment_id, deleted: true }.
import type { Command } from "../types.ts";
import { attachmentId, attachmentPath, ID_ARG, session } from "./common.ts";

export const attachmentDelete: Command = {
  noun: "attachment",
  verb: "delete",
  summary: "delete an attachment (its bytes and capability URLs go too)",
  flags: [],
  args: [ID_ARG],
  examples: ["service attachment delete att_…"],
  skillCheck: true,
  async run(ctx) {
    const id = attachmentId(ctx);
    const s = session(ctx);
    await s.relay.json("DELETE", attachmentPath(id), { auth: s.auth });
    ctx.out.json({ attachment_id: id, deleted: true });
  },
};
