// `service credentials rotate --app <app> --credential <id> [--overlap <seconds>]`: a new
// token, printed once; the old one keeps working for the overlap (default 1 day, clamped
// by the relay; 0 stops it at once).
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, requiredFlag, wholeFlag } from "./common.ts";

export const credentialsRotate: Command = {
  noun: "credentials",
  verb: "rotate",
  summary: "new token for a credential (printed once); the old one lasts --overlap seconds",
  flags: [
    APP_FLAG,
    { name: "credential", kind: "string", value: "<credentialId>", description: "the credential's id (from `credentials list`)" },
    { name: "overlap", kind: "string", value: "<seconds>", description: "how long the old token keeps working (default 1 day; 0 = stop it now)" },
  ],
  args: [],
  examples: ["service credentials rotate --app my-app --credential cred_… --overlap 3600"],
  skillCheck: true,
  async run(ctx) {
    const id = requiredFlag(ctx, "credential");
    const overlap = wholeFlag(ctx, "overlap", 0);
    const t = await appTarget(ctx);
    const body = overlap === undefined ? {} : { overlap_seconds: overlap };
    ctx.out.json(await t.relay.object("POST", `${t.path}/credentials/${encodeURIComponent(id)}/rotate`, { auth: t.auth, body }));
  },
};
