// `service apps wake <app>`: wake a dormant app (POST /v1/apps/:id/wake); a no-op on any
// other status. Prints the relay's { id, status }.
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsWake: Command = {
  noun: "apps",
  verb: "wake",
  summary: "wake a dormant app",
  flags: [],
  args: [APP_ARG],
  examples: ["service apps wake my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/wake`, { auth: t.auth }));
  },
};
