// `service data <app> <collection> count`: the live row count (GET …/count), which the
// relay answers only for collections that declare countRead.
import type { DataVerb } from "./common.ts";

export const dataCount: DataVerb = {
  verb: "count",
  usage: "count",
  summary: "live row count: { count } (needs countRead)",
  key: "none",
  flags: [],
  async run(ctx) {
    const t = await ctx.open();
    ctx.out.json(await t.relay.object("GET", `${t.base}/count`, { auth: t.auth }));
  },
};
