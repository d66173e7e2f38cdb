// `service apps export <app> [--out <file>]`: GET /v1/apps/:id/export, the app as one tar
// archive (docs/export-import.md), streamed as it arrives. With --out it is written to a
// `.partial` file first and renamed when whole, so a failed export never leaves a file that
// looks complete; stdout then gets { app_id, written, bytes }. Without --out the archive
// goes to stdout, for a pipe (refused when stdout is a terminal).
import { createWriteStream, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { stringFlag } from "../../argv.ts";
import { CliError, invalidArgs } from "../../errors.ts";
import { streamedExchange } from "../../streamed-transfer.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsExport: Command = {
  noun: "apps",
  verb: "export",
  summary: "write an app (manifest, document, assets, rows, attachments) to one archive",
  description: "The archive is a tar file with a SHA256SUMS entry; `service apps import <file>` makes a new app from it. Members, credentials, grant links, connections and secrets are never in it.",
  flags: [{ name: "out", kind: "string", value: "<file>", description: "the file to write (default: stdout)" }],
  args: [APP_ARG],
  examples: ["service apps export my-app --out my-app.tar"],
  skillCheck: true,
  async run(ctx) {
    const out = stringFlag(ctx.flags, "out");
    if (out === undefined && process.stdout.isTTY) {
      throw invalidArgs("The archive is binary; give --out <file>, or pipe stdout into a file.", ctx.command, { flag: "--out" });
    }
    const t = await target(ctx, ctx.args[0]!);
    if (out === undefined) {
      await streamedExchange(t.relay, "GET", `${t.path}/export`, { auth: t.auth, label: t.app.id, download: process.stdout });
      return;
    }
    const partial = `${out}.partial`;
    let answer;
    try {
      answer = await streamedExchange(t.relay, "GET", `${t.path}/export`, { auth: t.auth, label: path.basename(out), download: createWriteStream(partial) });
      renameSync(partial, out);
    } catch (err) {
      rmSync(partial, { force: true });
      if (err instanceof CliError) throw err;
      throw new CliError("write_failed", `Could not write ${out}: ${(err as Error).message}`, { hint: "Check that the directory exists and is writable." });
    }
    ctx.out.json({ app_id: t.app.id, written: path.resolve(out), bytes: answer.bytes });
  },
};
