// `service apps show <app>`: the app's detail record (GET /v1/apps/:id). An app in the
// trash is shown too (with its deleted_at), so it can be inspected before a restore.
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsShow: Command = {
  noun: "apps",
  verb: "show",
  summary: "show one app's detail record (manifest, version, usage, timezone)",
  flags: [],
  args: [APP_ARG],
  examples: ["service apps show my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(t.app.detail ?? (await t.relay.object("GET", `${t.path}?include_deleted=true`, { auth: t.auth })));
  },
};
