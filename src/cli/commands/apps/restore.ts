// `service apps restore <app>`: bring a deleted app back with all its data (POST
// /v1/apps/:id/restore); prints the restored app's detail. Fails at the app limit.
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsRestore: Command = {
  noun: "apps",
  verb: "restore",
  summary: "bring a deleted app back with its data",
  flags: [],
  args: [APP_ARG],
  examples: ["service apps restore my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/restore`, { auth: t.auth }));
  },
};
