/**
 * The Hono environment every route shares: the Worker bindings and the per-request
 * variables that middleware resolves (who is calling). Kept apart so route modules and
 * middleware import the type without importing each other.
 */
import type { Context } from "hono";
import type { CredentialGrant } from "../permissions";
import type { AppRow } from "../db/apps";

export interface AgentPrincipal {
  kind: "agent";
  agentId: string;
  keyId: string;
  keyPrefix: string;
  name: string | null;
  ownerHumanId: string | null;
}

export interface HumanPrincipal {
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
  /** `credential`: a service credential, on the collection endpoints (auth kind "rows") and, with its members flag, the member directory. */
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

export interface AppEnv {
  Bindings: Env;
  Variables: {
    agent: AgentPrincipal;
    human: HumanPrincipal;
    actor: OwnerActor;
    credential: CredentialCaller;
    /** The app named by `/v1/apps/:id`, found by the auth lookup (null: none of the caller's). */
    appLookup: { ref: string; app: AppRow | null } | null;
    /** When the auth lookup behind this request was read from D1 (ms since the epoch; earlier when it was reused). */
    authCheckedAt: number;
    /** Set on the collection endpoints, whose store calls are re-judged: an agent key's lookup may be reused there. */
    reuseAgentLookup: boolean;
  };
}

export type AppContext = Context<AppEnv>;
