// `service credentials pause|resume|revoke --app <app> --credential <id>`: the state
// changes of a credential. Each prints `{ <paused|resumed|revoked>: true, app_id,
// credential_id }` (WIRE §6.7). Pause takes effect on the token's next request; resume
// never undoes a revoke; revoke is permanent and kills an overlap-window token too.
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, requiredFlag } from "./common.ts";

const CREDENTIAL_FLAG = { name: "credential", kind: "string" as const, value: "<credentialId>", description: "the credential's id (from `credentials list`)" };

function stateVerb(verb: "pause" | "resume" | "revoke", done: "paused" | "resumed" | "revoked", summary: string): Command {
  return {
    noun: "credentials",
    verb,
    summary,
    flags: [APP_FLAG, CREDENTIAL_FLAG],
    args: [],
    examples: [`service credentials ${verb} --app my-app --credential cred_…`],
    skillCheck: true,
    async run(ctx) {
      const id = requiredFlag(ctx, "credential");
      const t = await appTarget(ctx);
      const base = `${t.path}/credentials/${encodeURIComponent(id)}`;
      await t.relay.json(verb === "revoke" ? "DELETE" : "POST", verb === "revoke" ? base : `${base}/${verb}`, { auth: t.auth });
      ctx.out.json({ [done]: true, app_id: t.app.id, credential_id: id });
    },
  };
}

export const credentialsPause = stateVerb("pause", "paused", "pause a credential: its token is refused from the next request on");
export const credentialsResume = stateVerb("resume", "resumed", "resume a paused credential (never a revoked one)");
export const credentialsRevoke = stateVerb("revoke", "revoked", "revoke a credential for good (its overlap token too)");
