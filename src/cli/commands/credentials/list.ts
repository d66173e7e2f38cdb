// `service credentials list --app <app>`: GET /v1/apps/:id/credentials (prefixes only, never tokens).
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const credentialsList: Command = {
  noun: "credentials",
  verb: "list",
  summary: "list an app's service credentials (prefixes, state, allowlist; never tokens)",
  flags: [APP_FLAG],
  args: [],
  examples: ["service credentials list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/credentials`, { auth: t.auth }));
  },
};
