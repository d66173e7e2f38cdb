// `service ingest list --app <app>`: GET /v1/apps/:id/ingest-hooks — each hook with its full
// secret URL, rule fields (null once the rule left the manifest), signing secret state
// (never the secret) and delivery counts. Prints the relay's `{ hooks }`.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const ingestList: Command = {
  noun: "ingest",
  verb: "list",
  summary: "list the app's inbound hooks with their secret URLs and delivery counts",
  description: "Each hook is { name, url, collection, mode, wake, handshake, disabledAt, createdAt,\nsigningSecret: { configured, fingerprint, setAt, previousUntil }, verify, deliveries: { accepted, failed, dropped_duplicate } }.\nThe url is the secret: whoever has it can write into the hook's collection.",
  flags: [APP_FLAG],
  args: [],
  examples: ["service ingest list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", `${t.path}/ingest-hooks`, { auth: t.auth }));
  },
};
