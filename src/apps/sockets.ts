/**
 * Ending the open feed sockets whose access was just withdrawn. A socket's principal is
 * fixed when it connects, so every change that takes access away from someone who may be
 * watching — a member removed or re-roled, a grant link revoked, a preview token revoked,
 * an agent paused or its keys revoked, the app trashed or handed to a new owner — closes
 * that someone's sockets in the same request, right after the change is stored. The store
 * also remembers the withdrawal for a minute, so that requests and upgrades checked just
 * before it are turned away too (durable-objects/app-store/withdrawals.ts).
 * The close is 1012 ("reconnect"): the client comes back and is judged afresh, so a
 * withdrawn credential is refused and a re-roled member sees with the new roles.
 *
 * The change itself has already happened when this runs, and every HTTP request is
 * re-checked anyway, so an AppStore that cannot be reached does not undo or fail it: the
 * failure is logged and the socket ends at its next reconnect instead.
 */
import { errorLogLine } from "../db/query-errors";
import type { SocketSelector } from "../../durable-objects/app-store/contract";
import { appStore } from "./store";
import { appIdsOfOwner } from "../db/apps";

export type { SocketSelector };

/** Closes the app's feed sockets that `only` selects (all without it), asking them to reconnect; a failure is logged, never thrown. */
async function closeOrLog(env: Env, appId: string, why: string, only?: SocketSelector): Promise<void> {
  try {
    await appStore(env, appId).closeWatchers("reconnect", only);
  } catch (err) {
    console.error(`${why}: open feed sockets of app ${appId} not closed`, errorLogLine(err));
  }
}

/** Closes the app's feed sockets that `only` selects, asking them to reconnect; never throws. */
export function endSockets(env: Env, appId: string, only: SocketSelector, why: string): Promise<void> {
  return closeOrLog(env, appId, why, only);
}

/** Closes every feed socket of the app (it was trashed or changed hands); never throws. */
export function endAllSockets(env: Env, appId: string, why: string): Promise<void> {
  return closeOrLog(env, appId, why);
}

/**
 * Closes an agent's feed sockets on every app of its owner (the apps it can reach): its
 * socket was opened with a key that was just paused or revoked. A socket of an agent that
 * still holds another live key simply reconnects with it.
 */
export async function endAgentSockets(env: Env, ownerHumanId: string | null, agentId: string, why: string): Promise<void> {
  if (ownerHumanId === null) return;
  const appIds = await appIdsOfOwner(env, ownerHumanId);
  await Promise.all(appIds.map((appId) => endSockets(env, appId, { agentId }, why)));
}
