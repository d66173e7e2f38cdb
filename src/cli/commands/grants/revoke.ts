// `service grants revoke --app <app> --grant <grantId>`: DELETE /v1/apps/:id/grants/:id
// (idempotent); the link and every browser it admitted stop at once. Prints
// `{ revoked: true, app_id, grant_id }` (WIRE §6.7).
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, requiredFlag } from "../credentials/common.ts";

export const grantsRevoke: Command = {
  noun: "grants",
  verb: "revoke",
  summary: "revoke a grant link: the link and its holders stop at once",
  flags: [APP_FLAG, { name: "grant", kind: "string", value: "<grantId>", description: "the link's id (from `grants list`)" }],
  args: [],
  examples: ["service grants revoke --app my-app --grant grant_…"],
  skillCheck: true,
  async run(ctx) {
    const id = requiredFlag(ctx, "grant");
    const t = await appTarget(ctx);
    await t.relay.json("DELETE", `${t.path}/grants/${encodeURIComponent(id)}`, { auth: t.auth });
    ctx.out.json({ revoked: true, app_id: t.app.id, grant_id: id });
  },
};
