// `service connections authorize-url --app <app> --name <name>`: the link the owner opens
// in a browser to give an oauth2 connection consent, `{relay}/v1/apps/<id>/connections/
// <name>/authorize` (WIRE §2.6). It is built here, not fetched: with an app id there is no
// network call at all; a slug is first resolved to the id (WIRE §1.5). Prints
// `{ app_id, name, authorize_url }` (WIRE §6.7).
import type { Command } from "../types.ts";
import { APP_ID_PATTERN } from "../../resolve-app.ts";
import { APP_FLAG, NAME_FLAG, appTarget, connectionName, requiredFlag } from "./common.ts";

export const connectionsAuthorizeUrl: Command = {
  noun: "connections",
  verb: "authorize-url",
  summary: "print the link the owner opens to give an oauth2 connection consent",
  description: "Hand the link to your human: they open it in a browser, sign in as the app's owner and approve at the\nprovider; the connection then becomes active. An agent key cannot give consent. With an app id this\nmakes no network call; a slug is resolved to the id first.",
  flags: [APP_FLAG, NAME_FLAG],
  args: [],
  examples: ["service connections authorize-url --app my-app --name calendar"],
  skillCheck: false,
  async run(ctx) {
    const name = connectionName(ctx);
    const app = requiredFlag(ctx, "app");
    const resolved = ctx.resolve();
    const appId = APP_ID_PATTERN.test(app) ? app : (await appTarget(ctx)).app.id;
    const base = resolved.url.replace(/\/+$/, "");
    ctx.out.json({ app_id: appId, name, authorize_url: `${base}/v1/apps/${encodeURIComponent(appId)}/connections/${encodeURIComponent(name)}/authorize` });
  },
};
