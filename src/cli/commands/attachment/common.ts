// What the `attachment` verbs share (spec C, WIRE §2.9): the attachment id argument
// checked for shape before any call, and its path under /v1/attachments.
import { invalidArgs } from "../../errors.ts";
import type { ArgSpec } from "../../argv.ts";
import type { CommandContext } from "../types.ts";

export { session } from "../apps/common.ts";

export const ID_ARG: ArgSpec = { name: "id", required: true, description: "the attachment's id (att_…)" };

const ATTACHMENT_ID = /^att_[a-z0-9]{10,40}$/;

/** The positional attachment id, or invalid_args before any network call. */
export function attachmentId(ctx: CommandContext, index = 0): string {
  const id = (ctx.args[index] ?? "").trim();
  if (!ATTACHMENT_ID.test(id)) throw invalidArgs(`Not an attachment id: ${JSON.stringify(id.slice(0, 80))} (ids look like att_…).`, ctx.command, { arg: "id" });
  return id;
}

export function attachmentPath(id: string): string {
  return `/v1/attachments/${encodeURIComponent(id)}`;
}
