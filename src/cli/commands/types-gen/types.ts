// `service types <app> [--out <file>]`: GET /v1/apps/:id/types.d.ts, the TypeScript
// declarations of the app's live version (row data per collection, Row<T>, the typed
// page-script overlay). Without --out the file goes to stdout; with it stdout gets
// { app_id, written, bytes }.
import { stringFlag } from "../../argv.ts";
import { errorFromResponse } from "../../http.ts";
import { writeOutFile } from "../../out-file.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "../apps/common.ts";

export const typesCommand: Command = {
  noun: "types",
  verb: "",
  summary: "write TypeScript types for an app's collections and its page script",
  description: "Regenerate after every deploy that changes a schema: the file follows the live version.",
  flags: [{ name: "out", kind: "string", value: "<file>", description: "the file to write (default: stdout)" }],
  args: [APP_ARG],
  examples: ["service types my-app --out src/service-types.d.ts"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]!);
    const res = await t.relay.raw("GET", `${t.path}/types.d.ts`, { auth: t.auth });
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
    const out = stringFlag(ctx.flags, "out");
    if (out === undefined) {
      process.stdout.write(res.text);
      return;
    }
    ctx.out.json({ app_id: t.app.id, written: writeOutFile(out, res.text), bytes: new TextEncoder().encode(res.text).length });
  },
};
