/**
 * The callers the relay API's credentials resolve to, as the modules beside this one hand
 * them to the routes: an agent (key), a human (session cookie), a service credential, and
 * the owner-side actor any of them acts as. Kept here, apart from Hono, so resolving a
 * credential never needs the HTTP layer; src/http/types.ts puts them on the request.
 */
import type { CredentialGrant } from "../permissions";

export interface AgentCaller {
  kind: "agent";
  agentId: string;
  keyId: string;
  keyPrefix: string;
  name: string | null;
  ownerHumanId: string | null;
}

export interface HumanCaller {
  kind: "human";
  humanId: string;
  sessionId: string;
  email: string;
}

/**
 * Whoever acts with the owner's authority on owner-scoped routes (AKO): an agent key
 * (acting for the human who claimed it) or the owner's own session. `ownerHumanId` is
 * null only for an agent nobody has claimed yet.
 */
export interface OwnerActor {
  /** `credential`: a service or lease credential, on the collection endpoints (auth kind "rows") and, with its members flag, the member directory. */
  kind: "agent" | "human" | "credential";
  ownerHumanId: string | null;
  agentId: string | null;
}

/**
 * A service credential presented as the bearer on a collection endpoint: one app, an
 * allowlist, and the authority of that app's owner (never more).
 */
export interface CredentialCaller {
  credentialId: string;
  appId: string;
  mode: "explicit" | "following";
  grants: CredentialGrant[];
  /** Member-directory access (spec A). */
  members: boolean;
}

/**
 * An agent task's lease credential presented on a collection endpoint: one app, the
 * rule's reads and writes, with the authority of that app's owner (never more).
 */
export interface LeaseCaller {
  taskId: string;
  appId: string;
  reads: string[];
  writes: string[];
}
