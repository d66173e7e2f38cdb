// `service data <app> <collection> restore <key>` (or `--key <key>`, spec C's form):
// brings a soft-deleted row back (POST …/:key/restore) with its data and creator and a
// bumped version; owner and agent only. Prints the relay's { row }.
import { rowPath, type DataVerb } from "./common.ts";

export const dataRestore: DataVerb = {
  verb: "restore",
  usage: "restore <key> | restore --key <key>",
  summary: "bring a soft-deleted row back: { row }",
  key: "arg-or-flag",
  flags: [{ name: "key", kind: "string", value: "<key>", description: "restore, purge: the row (instead of the argument)" }],
  async run(ctx) {
    const t = await ctx.open();
    ctx.out.json(await t.relay.object("POST", rowPath(t.base, ctx.key, "/restore"), { auth: t.auth }));
  },
};
