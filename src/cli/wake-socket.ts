// The task worker's wake socket (WIRE §3.2, §3.4) for `service work`: one socket to
// `<api>/v1/agent-tasks/stream` for every app of the key's owner, subprotocols
// `service.v1` and `service.agentkey.<key>`. It reconnects after 1 s, doubling to 60 s,
// and the backoff resets on `hello`; one warning per outage and one line on recovery; it
// never ends the worker. Its first connection is noted on stderr. The worker learns of `hello { push }`, `agent-task.available`
// (a hint naming an app) and `agent-task.assign` (an already-leased envelope, `type`
// stripped); `ready(credits)` states the absolute credit, and only while push is on.
// Malformed frames are reported and ignored; unknown types are ignored silently.
import type { WebSocket } from "ws";
import { loopbackLookup, socketUrl } from "./feed-watch.ts";

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
const HANDSHAKE_MS = 10_000;

export interface WakeHandlers {
  /** `hello` arrived: push says whether the relay assigns tasks over this socket. */
  hello(push: boolean): void;
  available(appId: string): void;
  assign(envelope: Record<string, unknown>): void;
  /** The socket is gone (push credit with it); a reconnect follows. */
  lost(): void;
  warn(text: string): void;
  note(text: string): void;
}

export function wakeSocketUrl(apiBase: string): string {
  return socketUrl(apiBase, "/v1/agent-tasks/stream");
}

export class WakeSocket {
  private ws: WebSocket | null = null;
  private push = false;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set while an outage has been reported, so it is reported once. */
  private outage = false;
  private connectedOnce = false;

  constructor(private readonly apiBase: string, private readonly apiKey: string, private readonly on: WakeHandlers) {}

  start(): void {
    void this.connect();
  }

  /** States the absolute credit (only while the relay pushes). */
  ready(credits: number): void {
    if (!this.push || !this.ws) return;
    try {
      this.ws.send(JSON.stringify({ type: "ready", credits }));
    } catch {
      // closing; the reconnect states it again
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    try {
      this.ws?.close(1000, "worker stopping");
    } catch {
      // already closed
    }
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { WebSocket } = await import("ws");
    let ws: WebSocket;
    try {
      ws = new WebSocket(wakeSocketUrl(this.apiBase), ["service.v1", `service.agentkey.${this.apiKey}`], {
        handshakeTimeout: HANDSHAKE_MS, perMessageDeflate: false, lookup: loopbackLookup,
      } as never);
    } catch (err) {
      this.failed(`wake socket could not connect (${(err as Error).message}); polling continues`);
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.on("error", () => {
      // the close that follows reports it
    });
    ws.on("close", () => {
      if (this.ws === ws) this.ws = null;
      this.push = false;
      this.on.lost();
      this.failed(opened ? "wake socket lost; polling continues while it reconnects" : "wake socket could not connect; polling continues");
    });
    ws.on("message", (data) => {
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        this.on.warn("the wake socket sent a frame that is not JSON; ignored");
        return;
      }
      if (frame.type === "hello") {
        opened = true;
        this.retryMs = FIRST_RETRY_MS;
        if (this.outage) this.on.note("wake socket connected again");
        else if (!this.connectedOnce) this.on.note("wake socket connected");
        this.outage = false;
        this.connectedOnce = true;
        this.push = frame.push === true;
        this.on.hello(this.push);
      } else if (frame.type === "agent-task.available") {
        if (typeof frame.app_id === "string" && frame.app_id) this.on.available(frame.app_id);
        else this.on.warn("the wake socket sent agent-task.available without app_id; ignored");
      } else if (frame.type === "agent-task.assign") {
        const { type: _type, ...envelope } = frame;
        if (typeof envelope.task_id === "string" && envelope.task_id) this.on.assign(envelope);
        else this.on.warn("the wake socket sent agent-task.assign without task_id; ignored");
      }
    });
  }

  private failed(warning: string): void {
    if (this.stopped) return;
    if (!this.outage) this.on.warn(warning);
    this.outage = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
  }
}
