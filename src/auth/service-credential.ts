/**
 * Service credentials (`Bearer svcs_…`) resolved to the caller they stand for: one app,
 * an allowlist of grants, and the authority of that app's owner, never more. The current
 * token or a rotated-out one inside its overlap window holds; an unknown, revoked, expired
 * or paused credential is refused with 401 `unauthorized` and its reason. Which routes
 * take a credential at all (the collection endpoints, and the member directory when its
 * `members` flag is on) is the middleware's business.
 */
import { RelayError } from "../errors";
import { findCredentialByToken, touchCredential } from "../db/credentials";
import type { AppRow } from "../db/apps";
import type { CredentialGrant } from "../permissions";
import type { CredentialCaller } from "./callers";
import { SECRET_KINDS, lastUseDue } from "./tokens";

const REFUSALS = {
  unknown: "This service credential is not known to the relay.",
  revoked: "This service credential was revoked.",
  expired: "This service credential has expired (or it is a rotated-out token past its overlap window).",
  paused: "This service credential is paused by the app's owner.",
} as const;

/** Whether a bearer is shaped as a service credential (any other bearer is judged as an agent key or a session). */
export function isServiceCredential(bearer: string | null): bearer is string {
  return bearer !== null && bearer.startsWith(SECRET_KINDS.serviceCredential);
}

/** The credential, its app and that app's owner; or the 401 refusal. Its use is recorded at most once a minute. */
export async function resolveServiceCredential(
  env: { DB: D1Database }, token: string, waitUntil: (work: Promise<unknown>) => void,
): Promise<{ credential: CredentialCaller; ownerHumanId: string; app: AppRow }> {
  const found = await findCredentialByToken(env, token);
  if (!found.ok) throw new RelayError("unauthorized", REFUSALS[found.reason], { reason: found.reason, credential: "service" });
  const { credential } = found;
  const caller: CredentialCaller = {
    credentialId: credential.id,
    appId: credential.appId,
    mode: credential.mode,
    grants: JSON.parse(credential.grantsJson) as CredentialGrant[],
    members: credential.members,
  };
  if (lastUseDue(credential.lastUsedAt)) waitUntil(touchCredential(env, credential.id));
  return { credential: caller, ownerHumanId: found.ownerHumanId, app: found.app };
}
