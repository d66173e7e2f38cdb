// Shared material for the live data-plane tests: a manifest with one collection per
// visibility rule, deploying it, the page's same-origin data endpoints, and a small
// client for the app feed socket (`/_svc/ws` through SELF.fetch with Upgrade: websocket)
// that queues frames so a test can wait for the next one or prove that none arrives.
import { SELF } from "cloudflare:test";
import { afterEach, expect } from "vitest";
import { call, freshIp, json } from "../helpers";
import { appCall, owner, ownerToken, type AppCallOptions, type Deployed, type Owner } from "../serve/helpers";
import { clockPast, quietFor, waitFor } from "../../support/wait";

export type Obj = Record<string, unknown>;
export type Frame = Record<string, unknown> & { type: string };

const budget = { perIpPerDay: 0, perAppPerDay: 0 };

/** Collections of the live tests' app. */
export const LIVE_COLLECTIONS: Record<string, Obj> = {
  // Anyone reads and writes; only the owner edits.
  notes: { read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], countRead: ["anyone"], anonWriteBudget: budget },
  // Each writer reads only what it created (makes the app mint visitor identities).
  mine: { read: ["creator"], write: ["anyone"], update: ["creator"], delete: ["creator"], anonWriteBudget: budget },
  // The owner's alone.
  secret: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"], countRead: ["owner"] },
  // Append-only, read by anyone, written by the owner.
  log: { read: ["anyone"], write: ["owner"], delete: ["owner"], appendOnly: true },
};

export function liveManifest(collections: Record<string, Obj> = LIVE_COLLECTIONS, app: Obj = {}): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": { app: { name: "Live app", description: "Watched", icon: "📡", ...app }, collections },
  };
}

export interface LiveApp {
  who: Owner;
  app: Deployed;
}

export async function liveApp(visibility = "public", manifest = liveManifest()): Promise<LiveApp> {
  const who = await owner();
  const res = await call("/v1/apps", { key: who.agent.api_key, json: { html: "<p>live</p>", manifest, visibility } });
  if (res.status !== 201) throw new Error(await res.text());
  return { who, app: (await res.json()) as Deployed };
}

/** Writes through the agent API (WIRE §2.3). */
export async function agentCreate(key: string, appId: string, collection: string, data: unknown, rowKey?: string): Promise<Obj> {
  const res = await call(`/v1/apps/${appId}/collections/${collection}`, { key, json: { data, ...(rowKey ? { key: rowKey } : {}) } });
  return (await json<{ row: Obj }>(res, res.status === 200 ? 200 : 201)).row;
}

export async function agentUpdate(key: string, appId: string, collection: string, rowKey: string, data: unknown): Promise<Obj> {
  const res = await call(`/v1/apps/${appId}/collections/${collection}/${rowKey}`, { method: "PATCH", key, json: { data } });
  return (await json<{ row: Obj }>(res, 200)).row;
}

export async function agentDelete(key: string, appId: string, collection: string, rowKey: string): Promise<void> {
  const res = await call(`/v1/apps/${appId}/collections/${collection}/${rowKey}`, { method: "DELETE", key });
  await json(res, 200);
}

/** A visitor identity minted by the app origin. */
export async function visitor(slug: string, opts: AppCallOptions = {}): Promise<{ visitor_token: string; visitor_id: string }> {
  return json(await appCall(slug, "/_svc/visitor", { method: "POST", ...opts }), 201);
}

export { appCall, ownerToken };

/** A client of the app feed socket. */
export class Socket {
  readonly frames: Frame[] = [];
  private waiter: (() => void) | null = null;
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly res: Response, readonly ws: WebSocket) {
    ws.addEventListener("message", (ev) => {
      this.frames.push(JSON.parse(typeof ev.data === "string" ? ev.data : new TextDecoder().decode(ev.data as ArrayBuffer)) as Frame);
      this.waiter?.();
    });
    ws.addEventListener("close", (ev) => {
      this.closed = { code: ev.code, reason: ev.reason };
      this.waiter?.();
    });
  }

  /** Opens the socket; returns the refusal response when the upgrade is not accepted. */
  static async open(slug: string, protocols: string[], headers: Record<string, string> = {}): Promise<Socket | Response> {
    return Socket.openAt(`http://${slug}.localhost:8787/_svc/ws`, protocols, headers);
  }

  /** Opens a socket at any URL of the relay (the task-worker wake socket lives on the API origin). */
  static async openAt(url: string, protocols: string[], headers: Record<string, string> = {}): Promise<Socket | Response> {
    const res = await SELF.fetch(url, {
      headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": protocols.join(", "), "cf-connecting-ip": freshIp(), ...headers },
    });
    if (!res.webSocket) return res;
    res.webSocket.accept();
    return new Socket(res, res.webSocket);
  }

  /** Opens and expects the upgrade to succeed. */
  static async connect(slug: string, protocols: string[], headers: Record<string, string> = {}): Promise<Socket> {
    const opened = await Socket.open(slug, protocols, headers);
    if (opened instanceof Response) throw new Error(`upgrade refused: ${opened.status} ${await opened.text()}`);
    return opened;
  }

  /** Connects, takes the hello and subscribes from `since`; returns the hello and the first batch. */
  static async subscribed(slug: string, protocols: string[], since = 0): Promise<{ socket: Socket; hello: Frame; batch: Frame }> {
    return Socket.subscribe(await Socket.connect(slug, protocols), since);
  }

  /**
   * Reconnects as a client does after its socket was closed for a withdrawal: the store
   * turns away (1012, before hello) an upgrade checked in the very millisecond of the
   * withdrawal, so such a socket is opened again after a moment, a few times at most.
   */
  static async resubscribed(slug: string, protocols: string[], since = 0): Promise<{ socket: Socket; hello: Frame; batch: Frame }> {
    for (let attempt = 1; ; attempt++) {
      const socket = await Socket.connect(slug, protocols);
      try {
        return await Socket.subscribe(socket, since);
      } catch (err) {
        if (attempt >= 5 || socket.closed?.code !== 1012 || socket.frames.length > 0) throw err;
        // Turned away in the withdrawal's millisecond: try again in a later one.
        await clockPast();
      }
    }
  }

  private static async subscribe(socket: Socket, since: number): Promise<{ socket: Socket; hello: Frame; batch: Frame }> {
    const hello = await socket.next();
    expect(hello.type).toBe("hello");
    socket.send({ type: "sub", since });
    const batch = await socket.next();
    expect(batch.type).toBe("batch");
    return { socket, hello, batch };
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The next frame (in arrival order), waiting up to `ms`. */
  async next(ms = 3000): Promise<Frame> {
    const deadline = Date.now() + ms;
    while (this.frames.length === 0) {
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting for a frame`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no frame arrived in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => { clearTimeout(timer); resolve(); };
      });
      this.waiter = null;
    }
    return this.frames.shift()!;
  }

  /** Proves that nothing arrives for `ms` (a negative, so a time wait). */
  async quiet(ms = 300): Promise<void> {
    await quietFor(ms);
    expect(this.frames).toEqual([]);
  }

  /** Waits for the close event. */
  async whenClosed(ms = 3000): Promise<{ code: number; reason: string }> {
    return waitFor(() => this.closed, { timeout: ms, message: "the socket closing" });
  }

  close(): void {
    try {
      this.ws.close(1000, "done");
    } catch {
      // already closed
    }
  }
}

/** The subprotocol list of an agent. */
export const agentProtocols = (key: string) => ["service.v1", `service.agentkey.${key}`];
export const sessionProtocols = (token: string) => ["service.v1", `service.session.${token}`];
export const grantProtocols = (token: string) => ["service.v1", `service.grant.${token}`];
export const shareProtocols = (token: string) => ["service.v1", `service.share.${token}`];

/**
 * The sockets a test file opens, closed after each of its tests. Call once at the top of
 * the file; `keep` hands a socket over, `subscribed` opens one caught up from `since`.
 */
export function socketsClosedAfterEach() {
  const open: Socket[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  const keep = (socket: Socket): Socket => {
    open.push(socket);
    return socket;
  };
  const subscribed = async (slug: string, protocols: string[], since = 0): Promise<Socket> => keep((await Socket.subscribed(slug, protocols, since)).socket);
  return { keep, subscribed };
}
