// `service apps import <file>`: POST /v1/apps/import with the archive `service apps export`
// wrote (docs/export-import.md), streamed from the file as it is read. The relay checks
// every entry's sha256 before it creates anything; stdout gets its answer (the new app's
// id, slug and url, and what was imported).
import path from "node:path";
import { invalidArgs } from "../../errors.ts";
import { regularFileSize } from "../../local-file.ts";
import { parseJsonBody } from "../../http.ts";
import { streamedExchange } from "../../streamed-transfer.ts";
import type { Command } from "../types.ts";
import { session } from "./common.ts";

export const appsImport: Command = {
  noun: "apps",
  verb: "import",
  summary: "create a new app from an archive written by apps export",
  description: "The new app gets its own id, slug and URL; rows keep their keys, data, versions and stamps. Nothing is created unless the whole archive checks out.",
  flags: [],
  args: [{ name: "file", required: true, description: "the archive (.tar) to import" }],
  examples: ["service apps import my-app.tar"],
  skillCheck: true,
  async run(ctx) {
    const file = ctx.args[0]!;
    const size = regularFileSize(file);
    if (size === null) throw invalidArgs(`Cannot read ${file}: give the path of an archive written by \`service apps export\`.`, ctx.command, { file });
    const s = session(ctx);
    const answer = await streamedExchange(s.relay, "POST", "/v1/apps/import", {
      auth: s.auth, label: path.basename(file), upload: { file, size, contentType: "application/x-tar" },
    });
    ctx.out.json(parseJsonBody({ status: answer.status, headers: { get: () => null }, text: answer.text }));
  },
};
