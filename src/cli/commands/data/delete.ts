// `service data <app> <collection> delete <key> [--if-match <version>] [--yes]`:
// soft-delete (DELETE …/:key; restorable with `restore`). Spec C: --yes is accepted but
// the delete proceeds either way. Prints { deleted: true, key } (WIRE §6.7).
import { intFlag, rowPath, type DataVerb } from "./common.ts";
import { IF_MATCH_FLAG } from "./update.ts";

export const YES_FLAG = { name: "yes", kind: "boolean" as const, description: "delete: accepted (a delete is restorable and proceeds anyway); purge: required" };

export const dataDelete: DataVerb = {
  verb: "delete",
  usage: "delete <key> [--if-match <version>] [--yes]",
  summary: "soft-delete a row (restorable): { deleted: true, key }",
  key: "arg",
  flags: [IF_MATCH_FLAG, YES_FLAG],
  async run(ctx) {
    const ifMatch = intFlag(ctx, "if-match", 0, Number.MAX_SAFE_INTEGER);
    const t = await ctx.open();
    await t.relay.json("DELETE", rowPath(t.base, ctx.key), { auth: t.auth, body: ifMatch === undefined ? undefined : { if_match: ifMatch } });
    ctx.out.json({ deleted: true, key: ctx.key });
  },
};
