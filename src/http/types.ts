/**
 * The Hono environment every route shares: the Worker bindings and the per-request
 * variables that middleware resolves (who is calling). Kept apart so route modules and
 * middleware import the type without importing each other.
 */
import type { Context } from "hono";

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
  kind: "agent" | "human";
  ownerHumanId: string | null;
  agentId: string | null;
}

export interface AppEnv {
  Bindings: Env;
  Variables: {
    agent: AgentPrincipal;
    human: HumanPrincipal;
    actor: OwnerActor;
  };
}

export type AppContext = Context<AppEnv>;
