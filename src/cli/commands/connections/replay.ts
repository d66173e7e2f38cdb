// `service connections replay --app <app> --delivery <id>`: POST
// /v1/apps/:id/webhooks/deliveries/:deliveryId/replay — a new pending delivery of the
// same rule, URL and payload, with replayOfId set (409 when the rule left the manifest).
// Prints the relay's `{ delivery }`.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, requiredFlag } from "./common.ts";

export const connectionsReplay: Command = {
  noun: "connections",
  verb: "replay",
  summary: "send a webhook delivery again (as a new delivery)",
  flags: [APP_FLAG, { name: "delivery", kind: "string", value: "<deliveryId>", description: "the delivery's id, from `connections deliveries` (required)" }],
  args: [],
  examples: ["service connections replay --app my-app --delivery whd_…"],
  skillCheck: true,
  async run(ctx) {
    const id = requiredFlag(ctx, "delivery");
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", `${t.path}/webhooks/deliveries/${encodeURIComponent(id)}/replay`, { auth: t.auth }));
  },
};
