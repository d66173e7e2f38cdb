/**
 * A minimal Chrome DevTools Protocol client over the Browser Rendering binding (`BROWSER`).
 *
 * Why it exists: bundle size. The screenshots used `@cloudflare/puppeteer`, which put about
 * 296 KiB of minified code (most of it never called: locators, keyboard layouts, device
 * lists, rxjs) into the one module the Worker uploads, for the six protocol calls a
 * rendering needs. This file speaks the binding's protocol itself, the way that client's
 * version 1.4.0 does:
 *
 * 1. acquire a browser: `POST https://fake.host/v1/devtools/browser` answers `{ sessionId }`;
 * 2. connect: `GET https://fake.host/v1/devtools/browser/<sessionId>` with `Upgrade: websocket`
 *    answers the browser's own DevTools socket, one protocol message per text frame (the
 *    length-prefixed chunking of the older `/v1/connectDevtools?browser_session=` socket is
 *    not used on this path);
 * 3. on it, plain CDP: `Target.createTarget` and `Target.attachToTarget` (flat sessions),
 *    then page commands addressed by their `sessionId`; `Browser.close` ends the session.
 *
 * Only what src/apps/page-render.ts needs is here: commands with answers, and waiting for
 * one event. The local runtime serves the same routes (`wrangler dev` with `[browser]`).
 */

/** The binding ignores the host; the client library uses this one, and so do we. */
const BINDING_ORIGIN = "https://fake.host";

/** How long closing waits for the browser to confirm before dropping the socket anyway. */
const CLOSE_WAIT_MS = 2_000;

/** A page's flat-session id as `Target.attachToTarget` answers it; absent for browser-level commands. */
type PageSessionId = string | undefined;

type ProtocolMessage = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  sessionId?: string;
};

type Pending = { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void };
type EventWaiter = Pending & { method: string; sessionId: PageSessionId; matches: (params: Record<string, unknown>) => boolean };

/** One acquired browser and its DevTools socket. */
export class DevtoolsSession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private waiters: EventWaiter[] = [];
  private closedBecause: Error | null = null;

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => this.fail(new Error("the browser's DevTools socket closed")));
    socket.addEventListener("error", () => this.fail(new Error("the browser's DevTools socket failed")));
  }

  /** Acquires a fresh browser through the binding and connects to its DevTools socket. */
  static async open(binding: Fetcher): Promise<DevtoolsSession> {
    const acquired = await binding.fetch(`${BINDING_ORIGIN}/v1/devtools/browser`, { method: "POST" });
    const text = await acquired.text();
    if (acquired.status !== 200) throw new Error(`the browser binding refused a session: ${acquired.status} ${text.slice(0, 200)}`);
    const { sessionId } = JSON.parse(text) as { sessionId?: unknown };
    if (typeof sessionId !== "string" || sessionId === "") throw new Error("the browser binding answered no session id");
    const upgraded = await binding.fetch(`${BINDING_ORIGIN}/v1/devtools/browser/${encodeURIComponent(sessionId)}`, { headers: { Upgrade: "websocket" } });
    const socket = upgraded.webSocket;
    if (!socket) throw new Error(`the browser binding did not open a DevTools socket: ${upgraded.status}`);
    socket.accept();
    return new DevtoolsSession(socket);
  }

  /** Sends one command (to the browser, or to a page when `sessionId` is given) and answers its result. */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: PageSessionId): Promise<Record<string, unknown>> {
    if (this.closedBecause) return Promise.reject(this.closedBecause);
    const id = this.nextId++;
    const message: ProtocolMessage = sessionId ? { id, method, params, sessionId } : { id, method, params };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify(message));
    });
  }

  /**
   * Resolves with the params of the next `method` event from that page for which `matches`
   * holds. Call it before the command that causes the event, so the event cannot be missed.
   */
  nextEvent(method: string, sessionId: PageSessionId, matches: (params: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    if (this.closedBecause) return Promise.reject(this.closedBecause);
    return new Promise((resolve, reject) => this.waiters.push({ method, sessionId, matches, resolve, reject }));
  }

  /** Closes the browser (ending the session) and the socket; never throws, and waits at most CLOSE_WAIT_MS. */
  async close(): Promise<void> {
    if (!this.closedBecause) {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const waited = new Promise<void>((done) => { timer = setTimeout(done, CLOSE_WAIT_MS); });
      await Promise.race([this.send("Browser.close").catch(() => undefined), waited]);
      clearTimeout(timer);
    }
    this.fail(new Error("the browser session was closed"));
    try {
      this.socket.close();
    } catch {
      // Already closed by the other side.
    }
  }

  private receive(data: string | ArrayBuffer) {
    let message: ProtocolMessage;
    try {
      message = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data)) as ProtocolMessage;
    } catch {
      return this.fail(new Error("the browser sent a message that is not JSON"));
    }
    if (message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(`${message.error.message} (${message.error.code})`));
      else waiting.resolve(message.result ?? {});
      return;
    }
    if (!message.method) return;
    const params = message.params ?? {};
    const due = this.waiters.filter((waiter) => waiter.method === message.method && waiter.sessionId === message.sessionId && waiter.matches(params));
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => !due.includes(waiter));
    for (const waiter of due) waiter.resolve(params);
  }

  /** Fails every waiting command and event; later ones fail at once. */
  private fail(reason: Error) {
    if (this.closedBecause) return;
    this.closedBecause = reason;
    for (const waiting of [...this.pending.values(), ...this.waiters]) waiting.reject(reason);
    this.pending.clear();
    this.waiters = [];
  }
}
