// `service apps domain show|add|remove <app> [domain]` (spec C): custom domains through
// /v1/apps/:id/domain. `add` prints the bound domain with the DNS records to publish;
// `remove` without a domain unbinds every domain of the app.
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

const ACTIONS = ["show", "add", "remove"];

export const appsDomain: Command = {
  noun: "apps",
  verb: "domain",
  summary: "show|add|remove <app> [domain]: custom domains; add prints the DNS records; remove without a domain unbinds all",
  flags: [],
  args: [
    { name: "action", required: true, description: "show, add or remove" },
    APP_ARG,
    { name: "domain", required: false, description: "the host name (needed by add; remove without it removes every domain)" },
  ],
  examples: ["service apps domain add my-app photos.example.com", "service apps domain show my-app", "service apps domain remove my-app"],
  skillCheck: true,
  async run(ctx) {
    const [action, app, domain] = ctx.args;
    if (!ACTIONS.includes(action)) throw invalidArgs(`Unknown domain action ${JSON.stringify(action)}; use one of ${ACTIONS.join(", ")}.`, ctx.command);
    if (action === "add" && !domain) throw invalidArgs("`apps domain add` needs the domain, e.g. `service apps domain add my-app photos.example.com`.", ctx.command);
    if (action === "show" && domain) throw invalidArgs("`apps domain show` takes no domain: it shows the serving domain and its aliases.", ctx.command);
    const t = await target(ctx, app);
    const path = `${t.path}/domain`;
    if (action === "show") ctx.out.json(await t.relay.object("GET", path, { auth: t.auth }));
    else if (action === "add") ctx.out.json(await t.relay.object("POST", path, { auth: t.auth, body: { domain } }));
    else {
      await t.relay.json("DELETE", domain ? `${path}?domain=${encodeURIComponent(domain)}` : path, { auth: t.auth });
      ctx.out.json({ removed: domain ?? "all", app_id: t.app.id });
    }
  },
};
