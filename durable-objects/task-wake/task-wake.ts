/**
 * TaskWake: one per owner, holding that owner's task-worker wake sockets
 * (`/v1/agent-tasks/stream`, WIRE §3.2; decision note 2026-11-26-agent-tasks.md). The
 * Worker authenticates the agent key and hands the upgrade over (contract.ts); the object
 * accepts it as a hibernating socket, says `hello { push: true }`, and keeps each socket's
 * credit — the absolute number from its latest `ready` — in the socket's attachment.
 *
 * When a task is queued for one of the owner's apps, the effects consumer calls `wake`:
 * a socket with credit is assigned leased tasks (`agent-task.assign`, claimed exactly as
 * `POST /v1/agent-tasks/claim` does, never more than its credit), a socket without credit
 * is told `agent-task.available { app_id }`. A `ready` with credit also claims at once, so
 * tasks queued while the worker was busy reach it without a poll. Assignments run one at a
 * time per object, so two of them can never both spend the same credit. Before tasks (and
 * their credentials) are assigned, the socket's agent key is checked again: a key revoked
 * or paused since the socket opened ends the socket (1012) instead.
 */
import { DurableObject } from "cloudflare:workers";
import { claimTasks } from "../../src/effects/tasks/claim";
import { agentKeyHolds } from "../../src/effects/tasks/wake";
import { readHandoff, WAKE_PROTOCOL, type WakeApi, type WakeSocketState } from "./contract";
import { errorLogLine } from "../../src/db/query-errors";
import { withProductionLimits } from "../../src/db/production-limits";

/** The most credit one socket may state (a claim's own maximum). */
const MAX_CREDITS = 100;

export class TaskWake extends DurableObject<Env> implements WakeApi {
  /** Assignments, one after another (see the header). */
  private assigning: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withProductionLimits(env));
  }

  override async fetch(request: Request): Promise<Response> {
    const handoff = readHandoff(request);
    if (!handoff) return new Response("not a wake socket hand-off", { status: 400 });
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server);
    const state: WakeSocketState = { ...handoff, credits: 0 };
    server.serializeAttachment(state);
    server.send(JSON.stringify({ type: "hello", push: true }));
    return new Response(null, { status: 101, webSocket: client, headers: { "Sec-WebSocket-Protocol": WAKE_PROTOCOL } });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    try {
      const frame = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message)) as { type?: unknown; credits?: unknown };
      if (frame.type !== "ready") return; // unknown frames are ignored (forward compatibility)
      const credits = frame.credits;
      if (typeof credits !== "number" || !Number.isInteger(credits) || credits < 0) {
        ws.send(JSON.stringify({ type: "error", error: { code: "invalid_request", message: "ready needs credits: a whole number of tasks, 0 or more." } }));
        return;
      }
      const state = ws.deserializeAttachment() as WakeSocketState;
      ws.serializeAttachment({ ...state, credits: Math.min(credits, MAX_CREDITS) });
      if (credits > 0) await this.queueAssign(() => this.assign(ws));
    } catch (err) {
      if (err instanceof SyntaxError) return; // a frame that is not JSON is ignored like an unknown one
      console.error("task wake: a frame could not be handled", errorLogLine(err));
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(): Promise<void> {
    // The runtime closes the socket; nothing is held for it beyond its attachment.
  }

  /** A task was queued for `appId`: assign to sockets with credit, tell the others. Answers how many sockets were reached. */
  async wake(appId: string): Promise<number> {
    const sockets = this.ctx.getWebSockets();
    await this.queueAssign(async () => {
      for (const ws of sockets) {
        const state = ws.deserializeAttachment() as WakeSocketState;
        const assigned = state.credits > 0 ? await this.assign(ws) : 0;
        if (assigned === 0) send(ws, { type: "agent-task.available", app_id: appId });
      }
    });
    return sockets.length;
  }

  private queueAssign(work: () => Promise<unknown>): Promise<unknown> {
    const next = this.assigning.then(work, work);
    this.assigning = next.catch((err) => console.error("task wake: an assignment failed", errorLogLine(err)));
    return this.assigning;
  }

  /** Claims up to the socket's credit for its owner and sends each task; the credit is spent by what was sent. */
  private async assign(ws: WebSocket): Promise<number> {
    const state = ws.deserializeAttachment() as WakeSocketState | null;
    if (!state || state.credits <= 0) return 0;
    if (!(await agentKeyHolds(this.env, state.keyId, state.ownerHumanId))) {
      try {
        ws.close(1012, "the agent key no longer holds");
      } catch {
        // closed meanwhile
      }
      return 0;
    }
    const tasks = await claimTasks(this.env, { ownerHumanId: state.ownerHumanId, leasedBy: state.agentId }, state.credits);
    if (tasks.length === 0) return 0;
    ws.serializeAttachment({ ...state, credits: state.credits - tasks.length });
    // A socket that closed meanwhile gets nothing: its tasks' leases lapse and they come back.
    for (const task of tasks) send(ws, { type: "agent-task.assign", ...task });
    return tasks.length;
  }
}

function send(ws: WebSocket, frame: Record<string, unknown>): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // closed meanwhile
  }
}

