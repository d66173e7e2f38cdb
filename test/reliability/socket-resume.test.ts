// Sockets across a restart (issue 16, faults): a relay of its own, an app, and a few feed
// socket clients (the app origin's /_svc/ws, agent subprotocols, WIRE §3.1) following
// the feed while one writer keeps creating rows. During the writes the relay is killed
// (SIGKILL, a crash) and started again on the same port with the same state while the
// writer keeps trying; each client, its socket gone, reconnects and subscribes again from the
// last seq it saw, as the page SDK does. The writer retries an unanswered create with the
// same key. At the end every client has seen every write exactly once (after the
// protocol's own rule of dropping a seq it already has), in seq order, with no gap, and
// the raw count of repeats each client was sent is reported. Loopback only; the relay is
// stopped and its state removed even when an assertion fails.
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { waitFor } from "../support/wait.ts";
import { loopbackLookup } from "../../src/cli/feed-watch.ts";
import { call, claimedKey, ownRelay } from "./relay-control.ts";

const TOTAL = 80;
const CLIENTS = 3;
/** One crash (SIGKILL) mid-writes: each relay start costs seconds, and the file stays short. */
const KILLS: Array<{ afterWrites: number; signal: "SIGTERM" | "SIGKILL" }> = [{ afterWrites: 30, signal: "SIGKILL" }];

interface Entry { seq: number; op: string; collection_name: string; row_key: string }
type Frame = { type: string; entries?: Entry[]; entry?: Entry; cursor?: number; truncated?: boolean };

/** A feed socket client that keeps its cursor and resubscribes from it on every new socket. */
class FeedClient {
  /** Entries kept, after dropping any seq at or below the highest seen (WIRE §3.1 dedup). */
  readonly kept: Entry[] = [];
  /** Entries sent again that the dedup rule dropped. */
  repeats = 0;
  connections = 0;
  private cursor = 0;
  private socket: WebSocket | null = null;
  private stopped = false;

  constructor(private readonly url: string, private readonly key: string) {}

  get highest(): number {
    return this.cursor;
  }

  /** Opens a socket; resolves once it is open (false when the relay refused or was down). */
  private open(): Promise<boolean> {
    return new Promise((resolve) => {
      const ws = new WebSocket(this.url, ["service.v1", `service.agentkey.${this.key}`], { lookup: loopbackLookup } as never);
      let opened = false;
      ws.on("open", () => {
        opened = true;
        this.socket = ws;
        this.connections += 1;
        resolve(true);
      });
      ws.on("message", (raw) => this.receive(ws, JSON.parse(String(raw)) as Frame));
      ws.on("error", () => {
        if (!opened) resolve(false);
      });
      ws.on("close", () => {
        if (!opened) return resolve(false);
        if (this.socket === ws) this.socket = null;
        if (!this.stopped) void this.reconnect();
      });
    });
  }

  private receive(ws: WebSocket, frame: Frame): void {
    if (frame.type === "hello") ws.send(JSON.stringify({ type: "sub", since: this.cursor }));
    else if (frame.type === "batch") {
      for (const entry of frame.entries ?? []) this.take(entry);
      this.cursor = Math.max(this.cursor, frame.cursor ?? 0);
      if (frame.truncated) ws.send(JSON.stringify({ type: "sub", since: this.cursor }));
    } else if (frame.type === "entry" && frame.entry) this.take(frame.entry);
  }

  private take(entry: Entry): void {
    if (entry.seq <= this.cursor) {
      this.repeats += 1;
      return;
    }
    this.kept.push(entry);
    this.cursor = entry.seq;
  }

  /** Connects, retrying while the relay is down (bounded). */
  async reconnect(): Promise<void> {
    await waitFor(() => this.stopped || this.open(), { timeout: 90_000, interval: 200, message: "the feed socket reopened" });
  }

  close(): void {
    this.stopped = true;
    this.socket?.close(1000);
  }
}

const MANIFEST = {
  "x-service-manifest": {
    app: { name: "Resume" },
    collections: { items: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

describe("reliability: feed sockets resume from their cursor across a relay restart", () => {
  const own = ownRelay("relay-socket-resume-");
  const clients: FeedClient[] = [];

  afterAll(() => {
    for (const client of clients) client.close();
  });

  it("every client sees every write exactly once, in seq order, with no gap", async () => {
    const first = await own.start();
    const base = first.url;
    const key = await claimedKey(base);
    const created = await call(base, "POST", "/v1/apps", { key, body: { html: "<h1>resume</h1>", manifest: MANIFEST } });
    expect(created.status, created.text).toBe(201);
    const appId = created.json.app_id as string;
    const appUrl = new URL(created.json.url as string);
    const socketUrl = `ws://${appUrl.host}/_svc/ws`;
    for (let i = 0; i < CLIENTS; i++) clients.push(new FeedClient(socketUrl, key));
    await Promise.all(clients.map((client) => client.reconnect()));

    const rowsPath = `/v1/apps/${appId}/collections/items`;
    const keyOf = (i: number) => `item-${String(i).padStart(3, "0")}`;
    const pids = [first.child.pid];
    let kills = 0;
    const restarts: Promise<void>[] = [];
    for (let i = 0; i < TOTAL; i++) {
      // An unanswered create (the relay was down) is sent again with the same key until answered.
      await waitFor(async () => {
        const res = await call(base, "POST", rowsPath, { key, body: { key: keyOf(i), data: { i } } }).catch(() => null);
        return res !== null && res.status >= 200 && res.status < 300;
      }, { timeout: 90_000, interval: 200, message: `create ${keyOf(i)} answered` });
      const kill = KILLS[kills];
      if (kill && i + 1 === kill.afterWrites) {
        // Killed with the sockets attached, and started again while the writer keeps trying.
        kills += 1;
        restarts.push((async () => {
          await own.stop(kill.signal);
          pids.push((await own.start()).child.pid);
        })());
      }
    }
    await Promise.all(restarts);
    expect(kills).toBe(KILLS.length);
    expect(new Set(pids).size).toBe(KILLS.length + 1);

    // The feed over HTTP: exactly TOTAL creates, seqs 1..TOTAL.
    const feed = await call(base, "GET", `/v1/apps/${appId}/feed?since=0&limit=1000&wait=0`, { key });
    expect(feed.status, feed.text).toBe(200);
    const entries = feed.json.entries as Entry[];
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));

    await waitFor(() => clients.every((client) => client.highest >= TOTAL), { timeout: 30_000, interval: 100, message: "every client caught up" });
    for (const [n, client] of clients.entries()) {
      expect(client.connections, `client ${n} reconnected after each kill`).toBeGreaterThanOrEqual(KILLS.length + 1);
      expect(client.kept.map((entry) => entry.seq), `client ${n}: every seq once, in order`).toEqual(entries.map((entry) => entry.seq));
      expect(client.kept.map((entry) => entry.row_key), `client ${n}: every write once`).toEqual(Array.from({ length: TOTAL }, (_, i) => keyOf(i)));
      for (const entry of client.kept) expect(entry).toMatchObject({ op: "create", collection_name: "items" });
    }
    console.log(`socket resume: ${CLIENTS} clients, ${TOTAL} writes, ${KILLS.length} kills; connections ${clients.map((c) => c.connections).join("/")}, repeats dropped ${clients.map((c) => c.repeats).join("/")}`);
  }, 240_000);
});
