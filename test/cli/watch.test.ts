// `service apps watch` as a real process.
//
// Against the real test relay, which does not serve the app feed socket yet, so every
// watch there runs on the long-poll fallback: --once prints the next entry written while
// it waits, --since 0 replays, --collection filters (an undeclared name is refused),
// update and delete entries, --timeout ends with ws_timeout, Ctrl-C exits 0, argv errors.
//
// Against a stand-in relay (plain HTTP plus a WebSocket server) for what the real relay
// cannot show yet: the socket path itself (subprotocols, Host of a *.localhost app origin,
// sub/batch/entry frames, truncated batches, dedup, resync, _dormant, _suspended, clean
// and abnormal closes) and the long-poll's collection parameter, resync (410
// resync_required, with and without details.head), dormant (409 "app is dormant") and
// gone (410) answers. No relay route can make an app dormant, so
// dormancy is only exercised on the stand-in.
import { spawn } from "node:child_process";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { cleanupTempHomes, appPackage, cliPath, relayUrl, root, runCli, tempHome, type CliRun, claimedCliAgent, failed, ok, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;

function manifest(): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": {
      app: { name: "Watched" },
      collections: {
        notes: { read: ["owner"], write: ["owner"], delete: ["owner"] },
        tasks: { read: ["owner"], write: ["owner"], delete: ["owner"] },
      },
    },
  };
}





/** A run that printed entries, then ended with the error `code`. */
function endedWith(run: CliRun, code: string): CliRun {
  failed(run, code, { printed: true });
  return run;
}

/** stdout as JSON lines; each line must be compact (one object per line). */
function lines(run: CliRun): Obj[] {
  return run.stdout.split("\n").filter(Boolean).map((line) => {
    expect(line).toBe(JSON.stringify(JSON.parse(line)));
    return JSON.parse(line) as Obj;
  });
}

/**
 * A loopback pass-through to the real relay, for the watches that must be waiting before
 * a test writes. A watch pointed at it (SERVICE_URL) reaches the relay through it, and so
 * does its app socket: the relay's app URLs in JSON answers name the tap's port instead
 * of the relay's. The tap forwards every byte unchanged otherwise, and keeps what the
 * relay sent down each socket (unmasked, uncompressed text frames) and the long-polls in
 * flight, so `waiting()` can tell when the watch has caught up and waits for more.
 */
interface Tap {
  url: string;
  /** The watch has had its socket's first batch, or holds a long-poll: it now waits for entries. */
  waiting(): boolean;
  /** Whether the relay has sent `text` down a socket since the last `clear()`. */
  sent(text: string): boolean;
  /** Forgets what earlier watches saw. */
  clear(): void;
  close(): Promise<void>;
}

async function relayTap(): Promise<Tap> {
  const relay = new URL(relayUrl());
  const relayPort = Number(relay.port);
  let downstream = "";
  let heldPolls = 0;
  const sockets = new Set<import("node:net").Socket>();
  let port = 0;
  const toRelayHost = (host: string | undefined) => (host ?? "").replace(/:\d+$/, `:${relayPort}`);
  const server = createServer((req, res) => {
    const held = /\/feed\?/.test(req.url ?? "") && !/[?&]wait=0(&|$)/.test(req.url ?? "");
    if (held) heldPolls++;
    const upstream = request({ host: "127.0.0.1", port: relayPort, method: req.method, path: req.url, headers: { ...req.headers, host: toRelayHost(req.headers.host), "accept-encoding": "identity" } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (c: Buffer) => chunks.push(c));
      answer.on("end", () => {
        if (held) heldPolls--;
        let body = Buffer.concat(chunks);
        const headers = { ...answer.headers };
        if (String(headers["content-type"] ?? "").includes("application/json")) {
          body = Buffer.from(body.toString("utf8").replaceAll(`localhost:${relayPort}`, `localhost:${port}`));
          headers["content-length"] = String(body.length);
          delete headers["transfer-encoding"];
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("upgrade", (req: IncomingMessage, socket: import("node:net").Socket, head: Buffer) => {
    const upstream = connect(relayPort, "127.0.0.1");
    sockets.add(socket).add(upstream);
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const [name, value] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
      lines.push(`${name}: ${name.toLowerCase() === "host" ? toRelayHost(value) : value}`);
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) upstream.write(head);
    upstream.on("data", (c: Buffer) => { downstream += c.toString("latin1"); });
    upstream.pipe(socket);
    socket.pipe(upstream);
    const end = () => { socket.destroy(); upstream.destroy(); };
    socket.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  port = (server.address() as { port: number }).port;
  return {
    url: `http://localhost:${port}`,
    waiting: () => downstream.includes('"type":"batch"') || heldPolls > 0,
    sent: (text) => downstream.includes(text),
    clear: () => { downstream = ""; },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

afterAll(() => {
  cleanupTempHomes();
});

describe("apps watch against the relay (long-poll fallback)", () => {
  let me: CliAgent;
  let appId: string;
  let tap: Tap;
  const slug = `watch-${Math.random().toString(36).slice(2, 8)}`;

  /** Starts a watch through the tap; resolves with its run once it waits for new entries. */
  async function watching(args: string[]): Promise<{ run: Promise<CliRun> }> {
    tap.clear();
    const run = me.cli(["apps", "watch", ...args], { env: { SERVICE_URL: tap.url } });
    let ended = false;
    void run.then(() => { ended = true; });
    await waitFor(() => tap.waiting() || ended, { timeout: 30_000, message: "the watch waiting for new entries" });
    return { run };
  }

  async function write(method: string, collection: string, key: string, data?: Obj): Promise<void> {
    const base = `${relayUrl()}/v1/apps/${appId}/collections/${collection}`;
    const url = method === "POST" ? base : `${base}/${key}`;
    const body = method === "DELETE" ? undefined : JSON.stringify(method === "POST" ? { key, data } : { data });
    const res = await fetch(url, { method, headers: { authorization: `Bearer ${me.key}`, ...(body ? { "content-type": "application/json" } : {}) }, body });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
  }

  beforeAll(async () => {
    me = await claimedCliAgent("cli-watch-test");
    const dir = appPackage(manifest(), "watch");
    appId = ok(await me.cli(["deploy", dir, "--slug", slug])).json<{ app_id: string }>().app_id;
    tap = await relayTap();
  });

  afterAll(async () => {
    await tap?.close();
  });

  it("--timeout with nothing to read ends with ws_timeout and exit 1", async () => {
    const started = Date.now();
    const run = await me.cli(["apps", "watch", slug, "--timeout", "2"]);
    const error = failed(run, "ws_timeout");
    expect(error.hint).toContain("--timeout");
    expect(run.stdout).toBe("");
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("--once prints the next entry written while it waits, as one compact line", async () => {
    await write("POST", "notes", "n1", { text: "one" });
    await write("POST", "notes", "n2", { text: "two" });
    const watch = await watching([slug, "--since", "2", "--once", "--timeout", "40"]);
    await write("POST", "tasks", "t1", { title: "three" });
    const run = ok(await watch.run);
    expect(run.stderr).toBe("");
    expect(lines(run)).toEqual([{
      seq: 3, op: "create", collection_name: "tasks", row_key: "t1", row_version: 1, data: { title: "three" },
      author: { kind: "agent", id: expect.any(String) }, ts: expect.any(String),
    }]);
  });

  it("--since 0 replays from the start, by id or slug; update and delete entries follow", async () => {
    await write("PATCH", "notes", "n1", { text: "one, edited" });
    await write("DELETE", "notes", "n2");
    const run = endedWith(await me.cli(["apps", "watch", appId, "--since", "0", "--timeout", "3"]), "ws_timeout");
    const seen = lines(run);
    expect(seen.map((e) => [e.seq, e.op, e.collection_name, e.row_key])).toEqual([
      [1, "create", "notes", "n1"],
      [2, "create", "notes", "n2"],
      [3, "create", "tasks", "t1"],
      [4, "update", "notes", "n1"],
      [5, "delete", "notes", "n2"],
    ]);
    expect(seen[3]).toMatchObject({ row_version: 2, data: { text: "one, edited" } });
    expect(seen[4]).toMatchObject({ data: { text: "two" } });

    expect(lines(ok(await me.cli(["apps", "watch", slug, "--once"])))).toEqual([expect.objectContaining({ seq: 1, row_key: "n1" })]);
    expect(lines(ok(await me.cli(["apps", "watch", slug, "--since", "3", "--once"])))).toEqual([expect.objectContaining({ seq: 4, op: "update" })]);
  });

  it("--collection keeps those collections' entries, and --once waits for a matching entry", async () => {
    const tasksOnly = endedWith(await me.cli(["apps", "watch", slug, "--collection", "tasks", "--timeout", "2"]), "ws_timeout");
    expect(lines(tasksOnly).map((e) => e.row_key)).toEqual(["t1"]);
    const both = endedWith(await me.cli(["apps", "watch", slug, "--collection", " tasks,notes ", "--timeout", "2"]), "ws_timeout");
    expect(lines(both).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);

    const watch = await watching([slug, "--since", "5", "--collection", "tasks", "--once", "--timeout", "40"]);
    await write("POST", "notes", "n3", { text: "not this one" });
    // The socket filters nothing: the watch gets n3, drops it and goes on waiting (a
    // long-poll filters at the relay, so there nothing comes down for n3).
    await waitFor(() => tap.sent('"row_key":"n3"') || !tap.sent('"type":"batch"'), { message: "n3 reaching the watch" });
    await write("POST", "tasks", "t2", { title: "this one" });
    expect(lines(ok(await watch.run))).toEqual([expect.objectContaining({ seq: 7, collection_name: "tasks", row_key: "t2" })]);
  });

  it("--collection naming a collection the app does not declare → collection_not_found, exit 1, nothing printed", async () => {
    const run = await me.cli(["apps", "watch", slug, "--collection", "tasks,nope", "--timeout", "20"]);
    expect(failed(run, "collection_not_found").details).toEqual({ collection: "nope" });
    expect(run.stdout).toBe("");
  });

  it("exits 0 on Ctrl-C", async () => {
    tap.clear();
    const child = spawn(cliPath, ["apps", "watch", slug, "--since", "1000"], {
      cwd: root, env: { PATH: process.env.PATH ?? "", HOME: tempHome(), SERVICE_URL: tap.url, SERVICE_API_KEY: me.key }, stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => { stderr += d; });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // Ctrl-C is the watch's to handle only once it watches; before that it is Node's.
    await waitFor(() => tap.waiting() || child.exitCode !== null, { timeout: 30_000, message: "the watch waiting for new entries" });
    const sent = Date.now();
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await exited;
    clearTimeout(timer);
    expect(code, stderr).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5000);
  });

  it("refuses bad flags locally and unknown apps", async () => {
    for (const args of [["--since", "-1"], ["--since", "abc"], ["--timeout", "0"], ["--timeout", "soon"], ["--collection", " , "]]) {
      failed(await me.cli(["apps", "watch", slug, ...args]), "invalid_args");
    }
    failed(await me.cli(["apps", "watch", "no-such-watched-app"]), "app_not_found");
    failed(await me.cli(["apps", "watch"]), "invalid_args");
  });
});

// ---- the stand-in relay ----

const KEY = "svc_0123456789abcdef0123456789abcdef";

function entry(seq: number, collection = "notes"): Obj {
  return { seq, op: "create", collection_name: collection, row_key: `k${seq}`, row_version: 1, data: { seq }, author: { kind: "agent", id: "agent1" }, ts: "2026-01-01T00:00:00.000Z" };
}

/** What the socket does once open; `ws.on("sub", since => …)` sees each sub frame. */
type SocketScript = (ws: WebSocket) => void;

interface StandIn {
  url: string;
  port: number;
  /** Every socket handshake: the Host header and offered subprotocols. */
  handshakes: Array<{ host: string | undefined; protocols: string | undefined; path: string | undefined }>;
  /** The `since` of every sub frame, per app. */
  subs: number[];
  /** Every long-poll request: since, wait, limit, headers of note. */
  polls: Array<{ app: string; since: number; wait: string | null; limit: string | null; collection: string | null; auth?: string; version?: string }>;
}

describe("apps watch on the wire (stand-in relay)", () => {
  let server: Server;
  let wss: WebSocketServer;
  const s: StandIn = { url: "", port: 0, handshakes: [], subs: [], polls: [] };

  /** Per app id: its socket script (none = the socket path answers 404) and long-poll handler. */
  const sockets: Record<string, SocketScript> = {};
  const feeds: Record<string, (since: number, limit: number, wait: number) => { status: number; body: Obj }> = {};

  const APP = (name: string) => `${name}${"x".repeat(24 - name.length)}`;

  function send(res: ServerResponse, status: number, body: Obj) {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  beforeAll(async () => {
    wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has("service.v1") ? "service.v1" : false) });
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://stand-in");
      const appMatch = /^\/v1\/apps\/([a-z0-9]+)(\/feed)?$/.exec(url.pathname);
      if (!appMatch) return send(res, 404, { error: { code: "not_found", message: "no such path" } });
      const id = appMatch[1];
      if (!appMatch[2]) {
        return send(res, 200, { id, slug: id, visibility: "private", status: "active", url: `http://${id}.localhost:${s.port}/` });
      }
      const since = Number(url.searchParams.get("since"));
      s.polls.push({
        app: id, since, wait: url.searchParams.get("wait"), limit: url.searchParams.get("limit"), collection: url.searchParams.get("collection"),
        auth: req.headers.authorization, version: req.headers["x-service-cli-version"] as string | undefined,
      });
      const answer = feeds[id](since, Number(url.searchParams.get("limit") ?? 100), Number(url.searchParams.get("wait") ?? 0));
      const hold = answer.status === 200 && Array.isArray(answer.body.entries) && answer.body.entries.length === 0 ? 200 : 0;
      setTimeout(() => send(res, answer.status, answer.body), hold);
    });
    server.on("upgrade", (req, socket, head) => {
      const host = req.headers.host ?? "";
      const id = host.split(".")[0];
      s.handshakes.push({ host: req.headers.host, protocols: req.headers["sec-websocket-protocol"], path: req.url });
      const script = sockets[id];
      if (!script || req.url !== "/_svc/ws") {
        socket.end("HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}");
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        // Each sub frame is recorded and re-emitted as a "sub" event for the script.
        ws.on("message", (raw) => {
          const frame = JSON.parse(raw.toString()) as { type: string; since: number };
          if (frame.type !== "sub") return;
          s.subs.push(frame.since);
          ws.emit("sub", frame.since);
        });
        script(ws);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    s.port = (server.address() as { port: number }).port;
    s.url = `http://127.0.0.1:${s.port}`;
  });

  afterAll(async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const watch = (args: string[]) => runCli(tempHome(), ["apps", "watch", ...args], { env: { SERVICE_URL: s.url, SERVICE_API_KEY: KEY } });

  it("uses the app socket: subprotocols, *.localhost host, batches with dedup and truncation, entry, resync, then _dormant", async () => {
    const id = APP("sock");
    sockets[id] = (ws) => {
      ws.send(JSON.stringify({ type: "hello", seq: 4, app: { slug: id }, session: { kind: "owner", humanId: null }, auth: {} }));
      let subs = 0;
      ws.on("sub", () => {
        subs++;
        if (subs === 1) ws.send(JSON.stringify({ type: "batch", entries: [entry(3), entry(4, "tasks")], cursor: 4, truncated: true }));
        if (subs === 2) {
          ws.send(JSON.stringify({ type: "batch", entries: [entry(4, "tasks"), entry(5)], cursor: 6, truncated: false }));
          ws.send(JSON.stringify({ type: "agent-task.available" }));
          ws.send(JSON.stringify({ type: "entry", entry: entry(5) }));
          ws.send(JSON.stringify({ type: "entry", entry: entry(7) }));
          ws.send(JSON.stringify({ type: "resync" }));
          ws.send(JSON.stringify({ type: "entry", entry: entry(8) }));
          ws.send(JSON.stringify({ type: "_dormant" }));
        }
      });
    };
    feeds[id] = () => ({ status: 500, body: { error: { code: "internal", message: "the socket should have been used" } } });
    const run = ok(await watch([id, "--since", "2"]));
    expect(run.stderr).toBe("");
    expect(lines(run).map((l) => l.seq ?? l.type)).toEqual([3, 4, 5, 7, "resync", 8, "_dormant"]);
    const shake = s.handshakes.find((h) => h.host === `${id}.localhost:${s.port}`);
    expect(shake?.path).toBe("/_svc/ws");
    expect(shake?.protocols?.split(/,\s*/)).toEqual(["service.v1", `service.agentkey.${KEY}`]);
    expect(s.subs.slice(-2)).toEqual([2, 4]);
    expect(s.polls.filter((p) => p.app === id)).toEqual([]);
  });

  it("socket: --collection and --once, _suspended, clean and abnormal closes after hello", async () => {
    const hello = (ws: WebSocket) => ws.send(JSON.stringify({ type: "hello", seq: 0, app: {}, session: {}, auth: {} }));
    const once = APP("once");
    sockets[once] = (ws) => {
      hello(ws);
      ws.on("sub", () => ws.send(JSON.stringify({ type: "batch", entries: [entry(1), entry(2, "tasks"), entry(3, "tasks")], cursor: 3, truncated: false })));
    };
    expect(lines(ok(await watch([once, "--collection", "tasks", "--once"])))).toEqual([entry(2, "tasks")]);

    const suspended = APP("susp");
    sockets[suspended] = (ws) => {
      hello(ws);
      ws.send(JSON.stringify({ type: "_suspended" }));
    };
    expect(lines(ok(await watch([suspended])))).toEqual([{ type: "_suspended" }]);

    const clean = APP("clean");
    sockets[clean] = (ws) => {
      hello(ws);
      ws.send(JSON.stringify({ type: "entry", entry: entry(1) }));
      setTimeout(() => ws.close(1001, "going away"), 100);
    };
    expect(lines(ok(await watch([clean])))).toEqual([entry(1)]);

    const abnormal = APP("abnormal");
    sockets[abnormal] = (ws) => {
      hello(ws);
      setTimeout(() => ws.close(4009, "evicted"), 100);
    };
    const error = failed(await watch([abnormal]), "ws_closed_abnormally");
    expect(error.details).toEqual({ code: 4009, reason: "evicted" });

    const errorFrame = APP("errframe");
    sockets[errorFrame] = (ws) => {
      hello(ws);
      ws.send(JSON.stringify({ type: "error", error: { code: "collection_read_forbidden", message: "no", details: { collection: "x" } } }));
    };
    expect(failed(await watch([errorFrame]), "collection_read_forbidden").details).toEqual({ collection: "x" });
  });

  it("falls back for good to long-poll when the socket closes before hello", async () => {
    const id = APP("closer");
    sockets[id] = (ws) => ws.close(1000);
    let calls = 0;
    feeds[id] = () => (++calls === 1 ? { status: 200, body: { entries: [entry(1)], cursor: 1, truncated: false } } : { status: 409, body: { error: { code: "conflict", message: "app is dormant" } } });
    expect(lines(ok(await watch([id])))).toEqual([entry(1), { type: "_dormant" }]);
    expect(s.handshakes.filter((h) => h.host?.startsWith(id))).toHaveLength(1);
  });

  it("long-poll: wait=25 with the key and version, cursor = max(seq, page cursor), resync to the head, then _dormant", async () => {
    const id = APP("poll");
    // A feed whose floor jumps to 50 (head 60) after the first page, as a prune would.
    let floor = 0;
    let head = 2;
    const stored = new Set([1, 2]);
    let dormant = false;
    let longPolls = 0;
    feeds[id] = (since, limit, wait) => {
      if (wait > 0) {
        longPolls++;
        if (longPolls === 2) {
          floor = 50;
          head = 60;
          for (let i = 51; i <= 60; i++) stored.add(i);
        }
        if (longPolls === 3) {
          stored.add(61);
          head = 61;
        }
        if (longPolls === 4) dormant = true;
      }
      if (dormant) return { status: 409, body: { error: { code: "conflict", message: "app is dormant", details: { status: "dormant" } } } };
      if (since < floor) return { status: 410, body: { error: { code: "resync_required", message: "below the floor" } } };
      const seqs = [...stored].filter((q) => q > since).sort((a, b) => a - b);
      const page = seqs.slice(0, limit);
      const truncated = seqs.length > limit;
      const last = page.length ? page[page.length - 1] : since;
      return { status: 200, body: { entries: page.map((q) => entry(q)), cursor: truncated ? last : Math.max(last, head), truncated } };
    };
    const run = ok(await watch([id]));
    expect(lines(run).map((l) => l.seq ?? l.type)).toEqual([1, 2, "resync", 61, "_dormant"]);
    const polls = s.polls.filter((p) => p.app === id);
    const held = polls.filter((p) => p.wait !== "0");
    expect(held.map((p) => [p.since, p.wait])).toEqual([[0, "25"], [2, "25"], [60, "25"], [61, "25"]]);
    expect(polls.every((p) => p.auth === `Bearer ${KEY}` && /^\d+\.\d+\.\d+/.test(p.version ?? ""))).toBe(true);
    // Every probe stayed bounded.
    expect(polls.length).toBeLessThan(40);
  });

  it("long-poll: --collection is sent as collection=a,b; a 410 resync_required naming details.head resumes there at once", async () => {
    const id = APP("filtered");
    let polls = 0;
    feeds[id] = (since) => {
      polls++;
      // The relay filters: entries of tasks and logs only, the cursor past the others.
      if (polls === 1) return { status: 200, body: { entries: [entry(2, "tasks"), entry(4, "logs")], cursor: 5, truncated: false } };
      // The feed was reset meanwhile: the cursor is past its head.
      if (polls === 2) return { status: 410, body: { error: { code: "resync_required", message: "past the head", details: { since, floor: 0, head: 3 } } } };
      if (polls === 3) return { status: 200, body: { entries: [entry(4, "tasks"), entry(5, "notes")], cursor: 5, truncated: false } };
      return { status: 409, body: { error: { code: "conflict", message: "app is dormant" } } };
    };
    const run = ok(await watch([id, "--collection", "tasks,logs"]));
    // A notes entry the relay let through is still dropped here.
    expect(lines(run).map((l) => (l.seq !== undefined ? [l.seq, l.collection_name] : l.type))).toEqual([[2, "tasks"], [4, "logs"], "resync", [4, "tasks"], "_dormant"]);
    const mine = s.polls.filter((p) => p.app === id);
    // No probing: the resync resumed at details.head.
    expect(mine.map((p) => [p.since, p.wait, p.collection])).toEqual([[0, "25", "tasks,logs"], [5, "25", "tasks,logs"], [3, "25", "tasks,logs"], [5, "25", "tasks,logs"]]);
  });

  it("long-poll: 410 gone fails; 5xx is retried a few times, then passed through", async () => {
    const gone = APP("gone");
    feeds[gone] = () => ({ status: 410, body: { error: { code: "gone", message: "This app is suspended." } } });
    expect(failed(await watch([gone]), "gone").message).toBe("This app is suspended.");

    const flaky = APP("flaky");
    let calls = 0;
    feeds[flaky] = () => (++calls <= 2
      ? { status: 503, body: { error: { code: "unavailable", message: "worker restarted mid-request" } } }
      : { status: 200, body: { entries: [entry(9)], cursor: 9, truncated: false } });
    const run = ok(await watch([flaky, "--once"]));
    expect(lines(run)).toEqual([entry(9)]);
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^warning: the feed request failed/), expect.stringMatching(/^warning: the feed request failed/)]);
  });
});
