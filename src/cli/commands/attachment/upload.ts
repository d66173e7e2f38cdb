// `service attachment upload --file <path> [--scope agent|app] [--app-id <app>] [--filename]
// [--mime]`: sends the file through the shared uploader (inline under 1 MB, presign → PUT
// → confirm from 1 MB on); the relay sniffs, caps and stores it and answers the
// AttachmentRef, printed as it is.
// App scope needs --app-id (an id or slug, resolved as WIRE §1.5) and dies with the app.
import path from "node:path";
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { regularFileSize } from "../../local-file.ts";
import { resolveApp } from "../../resolve-app.ts";
import { uploadAttachment } from "../../uploader.ts";
import { oneOf } from "../apps/common.ts";
import type { Command } from "../types.ts";
import { session } from "./common.ts";

/** The relay's largest attachment (MAX_MEDIA_BLOB_BYTES); anything larger is refused here. */
const MAX_UPLOAD_BYTES = 50_000_000;

export const attachmentUpload: Command = {
  noun: "attachment",
  verb: "upload",
  summary: "upload a file (agent scope by default; app scope is deleted with the app)",
  flags: [
    { name: "file", kind: "string", value: "<path>", description: "the file to upload (required)" },
    { name: "scope", kind: "string", value: "agent|app", description: "agent (default) or app" },
    { name: "app-id", kind: "string", value: "<app>", description: "the app (id or slug) for --scope app" },
    { name: "filename", kind: "string", value: "<name>", description: "the name to keep (default: the file's own name)" },
    { name: "mime", kind: "string", value: "<type>", description: "the declared type; the relay refuses it when the bytes say otherwise" },
  ],
  args: [],
  examples: ["service attachment upload --file photo.jpg", "service attachment upload --file report.pdf --scope app --app-id my-app"],
  skillCheck: true,
  async run(ctx) {
    const file = stringFlag(ctx.flags, "file");
    if (!file) throw invalidArgs("`service attachment upload` needs --file.", ctx.command, { flag: "--file" });
    const scope = oneOf(ctx, "scope", ["agent", "app"]) ?? "agent";
    const appFlag = stringFlag(ctx.flags, "app-id");
    if (scope === "app" && !appFlag) throw invalidArgs("--scope app needs --app-id.", ctx.command, { flag: "--app-id" });
    if (scope === "agent" && appFlag) throw invalidArgs("--app-id goes with --scope app.", ctx.command, { flag: "--app-id" });
    const size = regularFileSize(file);
    if (size === null) throw invalidArgs(`--file ${JSON.stringify(file)} is not a readable file.`, ctx.command, { flag: "--file" });
    if (size > MAX_UPLOAD_BYTES) throw invalidArgs(`--file is ${size} bytes; attachments are at most ${MAX_UPLOAD_BYTES}.`, ctx.command, { flag: "--file" });
    const s = session(ctx);
    const appId = appFlag ? (await resolveApp(s.relay, s.key, appFlag)).id : undefined;
    const mime = stringFlag(ctx.flags, "mime");
    const request = { file, filename: stringFlag(ctx.flags, "filename") ?? path.basename(file), scope: scope === "app" ? "app" as const : "agent" as const, appId, ...(mime !== undefined ? { mime } : {}) };
    ctx.out.json(await uploadAttachment(s.relay, s.auth, request));
  },
};
