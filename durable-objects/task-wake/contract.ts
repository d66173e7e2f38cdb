/**
 * The TaskWake object's contract, the only module the rest of the relay imports from
 * durable-objects/task-wake/: the socket hand-off the Worker sends after it authenticated
 * the agent key (a fresh internal request carrying only the upgrade and who connected,
 * never anything the client sent), the RPC the effects consumer calls, and the stub for an
 * owner.
 */

/** The subprotocol the relay answers a wake socket with; never one that carries a credential. */
export const WAKE_PROTOCOL = "service.v1";

const HANDOFF_HEADER = "x-task-wake-handoff";

export interface WakeHandoff {
  ownerHumanId: string;
  agentId: string;
  /** The agent key the socket was opened with: tasks are assigned only while it holds. */
  keyId: string;
}

/** What each socket's attachment holds. */
export interface WakeSocketState extends WakeHandoff {
  /** The absolute credit of the socket's latest `ready`, less what was assigned since. */
  credits: number;
}

export interface WakeApi {
  wake(appId: string): Promise<number>;
}

/** The internal upgrade request for an authenticated agent of `ownerHumanId`. */
export function wakeUpgrade(handoff: WakeHandoff): Request {
  return new Request("https://task-wake.internal/connect", {
    headers: { Upgrade: "websocket", [HANDOFF_HEADER]: JSON.stringify(handoff) },
  });
}

export function readHandoff(request: Request): WakeHandoff | null {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
  try {
    const parsed = JSON.parse(request.headers.get(HANDOFF_HEADER) ?? "") as Partial<WakeHandoff>;
    const { ownerHumanId, agentId, keyId } = parsed;
    return typeof ownerHumanId === "string" && typeof agentId === "string" && typeof keyId === "string" ? { ownerHumanId, agentId, keyId } : null;
  } catch {
    return null;
  }
}

/** The owner's TaskWake object. */
export function taskWake(env: { TASK_WAKE: DurableObjectNamespace<import("./task-wake").TaskWake> }, ownerHumanId: string): DurableObjectStub<import("./task-wake").TaskWake> {
  return env.TASK_WAKE.get(env.TASK_WAKE.idFromName(ownerHumanId));
}
