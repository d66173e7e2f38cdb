// `service data <app> <collection> get <key>`: one live row, as the relay's { row }.
import { rowPath, type DataVerb } from "./common.ts";

export const dataGet: DataVerb = {
  verb: "get",
  usage: "get <key>",
  summary: "one live row: { row }",
  key: "arg",
  flags: [],
  async run(ctx) {
    const t = await ctx.open();
    ctx.out.json(await t.relay.object("GET", rowPath(t.base, ctx.key), { auth: t.auth }));
  },
};
