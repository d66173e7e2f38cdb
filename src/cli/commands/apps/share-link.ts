// `service apps share-link rotate <app>`: a new share URL for a link app (POST
// /v1/apps/:id/share-link/rotate); the old URL stops working at once. `rotate` is the
// only action.
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsShareLink: Command = {
  noun: "apps",
  verb: "share-link",
  summary: "rotate <app>: a new share URL for a link app (printed once; the old one dies)",
  flags: [],
  args: [{ name: "action", required: true, description: "rotate (the only action)" }, APP_ARG],
  examples: ["service apps share-link rotate my-app"],
  skillCheck: true,
  async run(ctx) {
    if (ctx.args[0] !== "rotate") throw invalidArgs(`Unknown share-link action ${JSON.stringify(ctx.args[0])}; the only one is rotate.`, ctx.command);
    const t = await target(ctx, ctx.args[1]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/share-link/rotate`, { auth: t.auth, body: {} }));
  },
};
