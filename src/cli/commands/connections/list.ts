// `service connections list --app <app>`: GET /v1/apps/:id/connections — each connection's
// metadata and the fingerprint of its secret, never the secret itself.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, connectionsPath } from "./common.ts";

export const connectionsList: Command = {
  noun: "connections",
  verb: "list",
  summary: "list the app's connections (metadata and fingerprints, never secrets)",
  description: "Each connection is { id, name, kind, provider, label, allowedHost, headerName, status, authScheme,\ninstanceBaseUrl, scopes, expiresAt, secretFingerprint, createdAt }, camelCase as the relay sends it.\nstatus is active, pending_auth (oauth2 waiting for the owner's consent) or needs_reauth.",
  flags: [APP_FLAG],
  args: [],
  examples: ["service connections list --app my-app"],
  skillCheck: true,
  async run(ctx) {
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("GET", connectionsPath(t), { auth: t.auth }));
  },
};
