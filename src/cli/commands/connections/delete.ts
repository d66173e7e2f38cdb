// `service connections delete --app <app> --name <name>`: DELETE
// /v1/apps/:id/connections/:name (idempotent; the secret is forgotten and webhooks naming
// the connection stop sending it). Prints `{ deleted: true, app_id, name }` (WIRE §6.7).
import type { Command } from "../types.ts";
import { APP_FLAG, NAME_FLAG, appTarget, connectionName, connectionsPath } from "./common.ts";

export const connectionsDelete: Command = {
  noun: "connections",
  verb: "delete",
  summary: "delete a connection and forget its secret (idempotent)",
  description: "There is no update: to change a connection, delete it and create it again.",
  flags: [APP_FLAG, NAME_FLAG],
  args: [],
  examples: ["service connections delete --app my-app --name crm"],
  skillCheck: true,
  async run(ctx) {
    const name = connectionName(ctx);
    const t = await appTarget(ctx);
    await t.relay.json("DELETE", connectionsPath(t, name), { auth: t.auth });
    ctx.out.json({ deleted: true, app_id: t.app.id, name });
  },
};
