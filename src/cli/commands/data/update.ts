// `service data <app> <collection> update <key> --data <…> [--if-match <version>]`:
// replaces the row's data (PATCH …/:key). With --if-match a version mismatch is the
// relay's 409 conflict, details.current holding the winning row.
import { intFlag, jsonInput, rowPath, type DataVerb } from "./common.ts";
import { DATA_FLAG } from "./upsert.ts";

export const IF_MATCH_FLAG = { name: "if-match", kind: "string" as const, value: "<version>", description: "update, delete: only if the row is still at this version (409 conflict otherwise)" };

export const dataUpdate: DataVerb = {
  verb: "update",
  usage: "update <key> --data <json|@file|-> [--if-match <version>]",
  summary: "replace a row's data: { row }",
  key: "arg",
  flags: [DATA_FLAG, IF_MATCH_FLAG],
  async run(ctx) {
    const ifMatch = intFlag(ctx, "if-match", 0, Number.MAX_SAFE_INTEGER);
    const data = await jsonInput(ctx, "data");
    const t = await ctx.open();
    const body: Record<string, unknown> = { data };
    if (ifMatch !== undefined) body.if_match = ifMatch;
    ctx.out.json(await t.relay.object("PATCH", rowPath(t.base, ctx.key), { auth: t.auth, body }));
  },
};
