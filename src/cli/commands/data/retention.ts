// `service data <app> <collection> retention [--show] [--max-rows <n>] [--max-age-days <n>]
// [--clear-rows] [--clear-age]` (WIRE §6.8): with no flag or --show, reads the view
// (GET …/retention); otherwise sets (a number) or clears (null) the owner's override per
// axis (PATCH …/retention), leaving the other axis alone. Both print the relay's
// { effective, authorDefault, override, wouldPrune }.
import { boolFlag } from "../../argv.ts";
import { argError, intFlag, type DataVerb } from "./common.ts";

const MAX_BOUND = 1_000_000;

export const dataRetention: DataVerb = {
  verb: "retention",
  usage: "retention [--show] [--max-rows <n>] [--max-age-days <n>] [--clear-rows] [--clear-age]",
  summary: "show or set the owner's retention override: { effective, authorDefault, override, wouldPrune }",
  key: "none",
  flags: [
    { name: "show", kind: "boolean", description: "retention: print the current bounds (the default with no other flag)" },
    { name: "max-rows", kind: "string", value: "<n>", description: "retention: keep at most n live rows (override)" },
    { name: "max-age-days", kind: "string", value: "<n>", description: "retention: drop rows older than n days (override)" },
    { name: "clear-rows", kind: "boolean", description: "retention: remove the max-rows override (back to the manifest's default)" },
    { name: "clear-age", kind: "boolean", description: "retention: remove the max-age-days override" },
  ],
  async run(ctx) {
    const maxRows = intFlag(ctx, "max-rows", 1, MAX_BOUND);
    const maxAgeDays = intFlag(ctx, "max-age-days", 1, MAX_BOUND);
    const clearRows = boolFlag(ctx.flags, "clear-rows");
    const clearAge = boolFlag(ctx.flags, "clear-age");
    if (maxRows !== undefined && clearRows) throw argError("--max-rows and --clear-rows contradict each other; give one.", "--clear-rows");
    if (maxAgeDays !== undefined && clearAge) throw argError("--max-age-days and --clear-age contradict each other; give one.", "--clear-age");
    const patch: Record<string, number | null> = {};
    if (maxRows !== undefined) patch.maxRows = maxRows;
    if (clearRows) patch.maxRows = null;
    if (maxAgeDays !== undefined) patch.maxAgeDays = maxAgeDays;
    if (clearAge) patch.maxAgeDays = null;
    const changing = Object.keys(patch).length > 0;
    if (changing && boolFlag(ctx.flags, "show")) throw argError("--show only reads; drop it to change the bounds (the new view is printed anyway).", "--show");
    const t = await ctx.open();
    const path = `${t.base}/retention`;
    ctx.out.json(changing ? await t.relay.object("PATCH", path, { auth: t.auth, body: patch }) : await t.relay.object("GET", path, { auth: t.auth }));
  },
};
