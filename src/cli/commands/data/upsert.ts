// `service data <app> <collection> upsert --data <json|@file|path|->`: the one
// create-shaped verb (POST …/collections/:name). Without --key the relay mints a key;
// with --key an existing row is returned as { row, deduped: true }; with --on <field>
// (a unique field) the matching row is updated in place, else created. Prints the
// relay's body.
import { stringFlag } from "../../argv.ts";
import { argError, jsonInput, type DataVerb } from "./common.ts";

export const DATA_FLAG = { name: "data", kind: "string" as const, value: "<json|@file|->", description: "upsert, update: the row's data as inline JSON, @file (or a path), or - for stdin" };

export const dataUpsert: DataVerb = {
  verb: "upsert",
  usage: "upsert --data <json|@file|-> [--key <key> | --on <field>]",
  summary: "create a row (or return the row at --key, or update the row matching --on)",
  key: "none",
  flags: [
    DATA_FLAG,
    { name: "key", kind: "string", value: "<key>", description: "upsert: the row's key (an existing row there is returned, deduped); restore, purge: the row" },
    { name: "on", kind: "string", value: "<field>", description: "upsert, import: a unique field; a row with the same value is updated instead of created" },
  ],
  async run(ctx) {
    const key = stringFlag(ctx.flags, "key");
    const on = stringFlag(ctx.flags, "on");
    if (key !== undefined && on !== undefined) throw argError("--key and --on cannot be combined: --on finds the row by its unique field.", "--on");
    const data = await jsonInput(ctx, "data");
    const t = await ctx.open();
    const body: Record<string, unknown> = { data };
    if (key !== undefined) body.key = key;
    if (on !== undefined) body.on = on;
    ctx.out.json(await t.relay.object("POST", t.base, { auth: t.auth, body }));
  },
};
