// `service apps update <app> [--visibility] [--timezone]`: PATCH /v1/apps/:id. Moving into
// `link` prints the new share_url once; leaving `link` kills the old one.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_ARG, VISIBILITIES, oneOf, target } from "./common.ts";

export const appsUpdate: Command = {
  noun: "apps",
  verb: "update",
  summary: "change an app's visibility or timezone",
  description: "Changing to link visibility prints a share_url (shown once); leaving link invalidates it.",
  flags: [
    { name: "visibility", kind: "string", value: "<private|link|public>", description: "new visibility" },
    { name: "timezone", kind: "string", value: "<IANA zone>", description: "the app's time zone, e.g. Europe/Paris" },
  ],
  args: [APP_ARG],
  examples: ["service apps update my-app --visibility public", "service apps update my-app --timezone Europe/Paris"],
  skillCheck: true,
  async run(ctx) {
    const visibility = oneOf(ctx, "visibility", VISIBILITIES);
    const timezone = stringFlag(ctx.flags, "timezone");
    if (visibility === undefined && timezone === undefined) throw invalidArgs("Give --visibility, --timezone or both.", ctx.command);
    const t = await target(ctx, ctx.args[0]);
    const body = { ...(visibility !== undefined ? { visibility } : {}), ...(timezone !== undefined ? { timezone } : {}) };
    ctx.out.json(await t.relay.object("PATCH", t.path, { auth: t.auth, body }));
  },
};
