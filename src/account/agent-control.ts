/**
 * A human pausing their agent or revoking its keys, from the API (`/v1/self/agents/…`) or
 * the console: the change is stored, then every app the agent could reach hears of it in
 * the same request — its feed sockets close, and the app's store turns away any call that
 * was checked before (durable-objects/app-store/withdrawals.ts), which is what lets the
 * collection endpoints reuse an agent key's lookup for a few seconds. Both doors call
 * these, so neither can store the change without reporting it.
 */
import { revokeAllKeys, setAgentPaused } from "../db/agents";
import { endAgentSockets } from "../apps/sockets";

export async function pauseAgent(env: Env, humanId: string, agentId: string): Promise<void> {
  await setAgentPaused(env, agentId, true);
  await endAgentSockets(env, humanId, agentId, "agent paused");
}

/** Resuming only grants: nothing to report. */
export async function resumeAgent(env: Env, agentId: string): Promise<void> {
  await setAgentPaused(env, agentId, false);
}

/** Revokes every key of the agent (also the first half of a rotation: reported before the new key is minted). */
export async function revokeAgentKeys(env: Env, humanId: string, agentId: string, why = "agent keys revoked"): Promise<void> {
  await revokeAllKeys(env, agentId);
  await endAgentSockets(env, humanId, agentId, why);
}
