// `service grants list --app <app>`: GET /v1/apps/:id/grants (usage counts; never token material).
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "../credentials/common.ts";

export const grantsList: Command = {
  noun: "grants",
  verb: "list",
  summary: "list an app's grant links with their usage (never the links themselves)",
  flags: [APP_FLAG],
  args: [],
  examples: ["service grants list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/grants`, { auth: t.auth }));
  },
};
