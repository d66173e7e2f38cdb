/**
 * The Hono environment every route shares: the Worker bindings and the per-request
 * variables that middleware resolves (who is calling; the callers themselves are defined
 * in src/auth/callers.ts). Kept apart so route modules and middleware import the type
 * without importing each other.
 */
import type { Context } from "hono";
import type { AppRow } from "../db/apps";
import type { AgentCaller, CredentialCaller, HumanCaller, LeaseCaller, OwnerActor } from "../auth/callers";

export type { AgentCaller, CredentialCaller, HumanCaller, LeaseCaller, OwnerActor };

export interface AppEnv {
  Bindings: Env;
  Variables: {
    agent: AgentCaller;
    human: HumanCaller;
    actor: OwnerActor;
    credential: CredentialCaller;
    /** An agent task's lease credential, on the collection endpoints. */
    lease: LeaseCaller;
    /** The app named by `/v1/apps/:id`, found by the auth lookup (null: none of the caller's). */
    appLookup: { ref: string; app: AppRow | null } | null;
    /** When the auth lookup behind this request was read from D1 (ms since the epoch; earlier when it was reused). */
    authCheckedAt: number;
    /** Set on the collection endpoints, whose store calls are re-judged: an agent key's lookup may be reused there. */
    reuseAgentLookup: boolean;
  };
}

export type AppContext = Context<AppEnv>;
