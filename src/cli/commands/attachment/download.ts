// `service attachment download <id> [--out <path>]`: GET /v1/attachments/<id>. With --out
// the bytes go to that file and stdout gets { attachment_id, written, bytes } (WIRE §6.7);
// without it the raw bytes go to stdout, for a pipe.
import { stringFlag } from "../../argv.ts";
import { errorFromResponse } from "../../http.ts";
import { writeOutFile } from "../../out-file.ts";
import type { Command } from "../types.ts";
import { attachmentId, attachmentPath, ID_ARG, session } from "./common.ts";

export const attachmentDownload: Command = {
  noun: "attachment",
  verb: "download",
  summary: "write an attachment's bytes to --out (or to stdout)",
  flags: [{ name: "out", kind: "string", value: "<path>", description: "the file to write (default: stdout)" }],
  args: [ID_ARG],
  examples: ["service attachment download att_… --out photo.jpg"],
  skillCheck: true,
  async run(ctx) {
    const id = attachmentId(ctx);
    const s = session(ctx);
    const res = await s.relay.raw("GET", attachmentPath(id), { auth: s.auth, timeoutMs: 300_000 });
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
    const bytes = res.bytes ?? new TextEncoder().encode(res.text);
    const out = stringFlag(ctx.flags, "out");
    if (out === undefined) {
      process.stdout.write(bytes);
      return;
    }
    ctx.out.json({ attachment_id: id, written: writeOutFile(out, bytes), bytes: bytes.length });
  },
};
