// `service ingest rotate --app <app> --name <hook>`: POST …/ingest-hooks/:name/rotate — a new
// secret URL, printed once as the relay's `{ hook: { name, url } }`; the old URL answers 404
// at once, with no redeploy.
import type { Command } from "../types.ts";
import { APP_FLAG, NAME_FLAG, appTarget, hookName, hookPath } from "./common.ts";

export const ingestRotate: Command = {
  noun: "ingest",
  verb: "rotate",
  summary: "give a hook a new secret URL (the old one stops at once)",
  flags: [APP_FLAG, NAME_FLAG],
  args: [],
  examples: ["service ingest rotate --app my-app --name github"],
  skillCheck: true,
  async run(ctx) {
    const name = hookName(ctx);
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", `${hookPath(t, name)}/rotate`, { auth: t.auth }));
  },
};
