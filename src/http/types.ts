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

export interface AppEnv {
  Bindings: Env;
  Variables: {
    agent: AgentPrincipal;
    human: HumanPrincipal;
  };
}

export type AppContext = Context<AppEnv>;
