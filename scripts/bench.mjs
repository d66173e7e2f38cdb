// `npm run bench`: the relay's benchmarks, run against a local relay (`wrangler dev`,
// development mode) and, on the same workerd build, a bare baseline Worker + Durable
// Object (bench/baseline/). Figures are printed, never asserted. Every request stays on
// loopback; every loop is bounded; every process started here is stopped on the way out.
//
//   (a) authenticated, validated row creates per second over HTTP against one app at 10
//       and 50 connections, beside bare Worker→DO→SQLite inserts driven by the same client
//       at the same concurrency, both with the request forwarded to the object and as an
//       RPC call; the ratio is taken against the faster; beside each, the server CPU a
//       create cost (the workerd processes' CPU time over the run, scripts/bench-cpu.mjs;
//       Linux only)
//   (b) write → watcher delivery latency with 1, 100 and 1,000 feed sockets, beside the
//       write's own HTTP round trip; then 5,000 sockets on one app (relay only), every
//       watcher's receipt of every write counted: "missed deliveries: 0" or the bench fails.
//   (a), (b) and (c) send their requests and sockets, the relay's and the bare ones, to
//       each runtime's own port past wrangler's dev proxy (scripts/runtime-port.mjs), which
//       production does not have; the later sections go through the proxy, which is asked
//       after (b) and started again (on the same state) when it no longer answers
//   (c) list of 1,000 rows with where + sort, beside an unfiltered list of 1,000 and a
//       bare SELECT of 1,000 rows from the baseline
//   (d) the CLI's start-up: `service --help` and `service skill version` (one GET to the
//       local relay), median wall time of process runs, beside `node -e 0` in the same run
//   (e) write → signed webhook received by a receiver on 127.0.0.1, p50/p99 and deliveries
//       per second at 1, 10 and 100 writers, beside a bare Worker → Queue → consumer POST
//       (scripts/bench-webhooks.mjs)
//   (f) notify: rows written with a rule that mails the owner on each create, and the time
//       until every one of them is in the development outbox (as a mail or in a digest)
//   (g) ingest POST → row committed: deliveries per second and p50/p99 of POSTs to an
//       inbound hook URL (mapped append, without and with a body dedupeKey), each answered
//       once its row is committed, beside the bare Worker→DO insert (RPC) at the same
//       concurrency in the same run
//   (h) agent tasks: write → task offered on the wake socket p50/p99, and claim → ack round
//       trips with 1 and 10 concurrent workers, beside bare baselines (scripts/bench-tasks.mjs)
//   (i) attachments: upload MB/s of 1 MB and 10 MB files inline, multipart and presigned,
//       downloads, a photo's re-encoding, and ?w= thumbnails first hit and cached, beside a
//       bare Worker's R2 put/get and Images resize (scripts/bench-attachments.mjs)
//   (j) size and start: the gzipped bundle `wrangler deploy --dry-run` would upload, and
//       spawn → first answered request, for the relay and the baseline (scripts/bench-size.mjs)
//
// Knobs (environment): BENCH_CREATES (2000), BENCH_CONCURRENCY ("10,50"), BENCH_ROUNDS (3),
// BENCH_WATCHERS ("1,100,1000"), BENCH_WATCH_WRITES (200: a p99 of 50 is their slowest one),
// BENCH_WATCH_WARMUP (25 untimed writes first), BENCH_CROWD (5000 sockets; 0 skips
// that run), BENCH_CROWD_WRITES (20), BENCH_LIST_ROWS (1000),
// BENCH_LIST_RUNS (30), BENCH_CLI_RUNS (10), BENCH_HOOK_WRITES (100), BENCH_HOOK_WRITERS
// ("1,10,100"), BENCH_NOTIFY_WRITES (200), BENCH_INGEST (500), BENCH_INGEST_CONCURRENCY
// ("1,16"), BENCH_TASK_WRITES (50), BENCH_TASKS (200), BENCH_UPLOAD_RUNS (5), BENCH_UPLOAD_SIZES
// ("1000000,10000000"); BENCH_PROFILE=<file> adds one more relay
// create run (a) or watch round at the most sockets (b) under the CPU profiler, writes the
// profile to <file> (the last one taken) and prints where the isolate spent its time.
// BENCH_ONLY=<letters> (say "e,h") runs only those sections.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { answers, applyMigrations, freePort, startRelay } from "./relay-process.mjs";
import { profiled } from "./bench-profile.mjs";
import { runtimePort } from "./runtime-port.mjs";
import { openInspector } from "./soak-probe.mjs";
import { serverCpu } from "./bench-cpu.mjs";
import { ensureCliBundle } from "./build-cli.mjs";
import { measureDeliveries, startHookReceiver } from "./bench-webhooks.mjs";
import { benchTasks } from "./bench-tasks.mjs";
import { benchSize } from "./bench-size.mjs";
import { benchAttachments } from "./bench-attachments.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

function knob(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

const CREATES = knob("BENCH_CREATES", 2000);
/** (a)'s connection counts (the issue's 10 and 50); (c) fills its list at the first. */
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "10,50").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const CONCURRENCY = CONCURRENCIES[0] ?? 10;
const ROUNDS = knob("BENCH_ROUNDS", 3);
const WATCHERS = (process.env.BENCH_WATCHERS ?? "1,100,1000").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const WATCH_WRITES = knob("BENCH_WATCH_WRITES", 200);
// Untimed writes before the timed ones, for both targets: right after a round's sockets
// open, the relay's writes are slower for about a second (up to 2-3x its steady p50 at
// 1,000 sockets; the bare Worker's far less), and a p99 of 200 writes would be that
// second's. docs/performance.md gives both.
const WATCH_WARMUP = knob("BENCH_WATCH_WARMUP", 25);
const CROWD = process.env.BENCH_CROWD?.trim() === "0" ? 0 : knob("BENCH_CROWD", 5000);
const CROWD_WRITES = knob("BENCH_CROWD_WRITES", 20);
/** The crowd round counts deliveries, not latency: a few untimed writes are enough. */
const CROWD_WARMUP = 3;
const LIST_ROWS = Math.min(knob("BENCH_LIST_ROWS", 1000), 1000);
const LIST_RUNS = knob("BENCH_LIST_RUNS", 30);
const CLI_RUNS = knob("BENCH_CLI_RUNS", 10);
const HOOK_WRITES = knob("BENCH_HOOK_WRITES", 100);
const NOTIFY_WRITES = knob("BENCH_NOTIFY_WRITES", 200);
const TASK_WRITES = knob("BENCH_TASK_WRITES", 50);
const TASKS = knob("BENCH_TASKS", 200);
const HOOK_WRITERS = (process.env.BENCH_HOOK_WRITERS ?? "1,10,100").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const INGEST = knob("BENCH_INGEST", 500);
const INGEST_CONCURRENCY = (process.env.BENCH_INGEST_CONCURRENCY ?? "1,16").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const UPLOAD_RUNS = knob("BENCH_UPLOAD_RUNS", 5);
const UPLOAD_SIZES = (process.env.BENCH_UPLOAD_SIZES ?? "1000000,10000000").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const PROFILE = process.env.BENCH_PROFILE?.trim() || null;
const ONLY = new Set((process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean));
/** Whether section `letter` runs (all of them unless BENCH_ONLY names some). */
const runs = (letter) => ONLY.size === 0 || ONLY.has(letter);

// ---------------------------------------------------------------------------------------
// Processes and clean-up

const cleanups = [];
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const fn of cleanups.reverse()) {
    try { fn(); } catch { /* best effort */ }
  }
}
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`);
    cleanup();
    process.exit(130);
  });
}

function tempDir(tag) {
  const dir = mkdtempSync(path.join(tmpdir(), `relay-bench-${tag}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const quietEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_UPDATE_NOTIFIER: "1" };

async function startBaseline(hookTarget, inspectorPort) {
  const port = await freePort();
  const persistTo = tempDir("baseline");
  const child = spawn(process.execPath, [
    wrangler, "dev", "--config", path.join(root, "bench", "baseline", "wrangler.toml"),
    "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo, "--show-interactive-dev-session=false", "--var", `HOOK_TARGET:${hookTarget}/baseline`,
  ], { cwd: root, env: quietEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout.on("data", (d) => { output += d; });
  child.stderr.on("data", (d) => { output += d; });
  const stop = () => { try { process.kill(-child.pid, "SIGTERM"); } catch { /* gone */ } };
  cleanups.push(stop);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the baseline's wrangler dev exited early (${child.exitCode}):\n${output}`);
    try {
      const res = await request({ port, path: "/health" });
      if (res.status === 200) return { port, stop, child };
    } catch { /* not up yet */ }
    await sleep(200);
  }
  throw new Error(`the baseline did not answer within 60 s:\n${output}`);
}

// ---------------------------------------------------------------------------------------
// One HTTP client for everything: node:http with keep-alive, on loopback only.

// workerd closes a keep-alive connection after 5 s idle; a request written to one just as
// it closes fails ("socket hang up"). The client drops its idle sockets sooner, at 4 s.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** { port, host?, method?, path, headers?, json? | raw? (a Buffer sent as it is) } → { status, headers, text, bytes, json() } */
function request({ port, host, method = "GET", path: p, headers = {}, json, raw }) {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? raw : JSON.stringify(json);
    const req = http.request({
      host: "127.0.0.1", port, method, path: p, agent,
      headers: {
        host: host ?? `localhost:${port}`,
        ...(json === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) }),
        ...headers,
      },
      timeout: 30_000,
    }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString("utf8");
        resolve({ status: res.statusCode, headers: res.headers, text, bytes, json: () => JSON.parse(text) });
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`timed out: ${method} ${p}`)));
    req.on("error", reject);
    req.end(body);
  });
}

function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text.slice(0, 500)}`);
  return res;
}

/** Runs `total` calls of `fn(i)` with `concurrency` in flight; returns the wall time in ms. */
async function drive(total, concurrency, fn) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, async () => {
    while (next < total) await fn(next++);
  }));
  return performance.now() - started;
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : "n/a");

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  for (const [i, r] of rows.entries()) {
    console.log("  " + r.map((cell, c) => String(cell).padEnd(widths[c])).join("  "));
    if (i === 0) console.log("  " + widths.map((w) => "-".repeat(w)).join("  "));
  }
}

// ---------------------------------------------------------------------------------------
// The relay: a signed-in human, a claimed agent, one deployed app.

const manifest = {
  $defs: {
    Item: {
      type: "object",
      properties: { title: { type: "string", maxLength: 200 }, n: { type: "integer" }, tag: { type: "string", enum: ["a", "b"] }, t: { type: "number" } },
      required: ["title", "n"],
      additionalProperties: false,
    },
  },
  "x-service-manifest": {
    app: { name: "Bench" },
    collections: {
      items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
      docs: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
      pings: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
  },
};

async function setUpApp(port) {
  const ip = "198.18.0.1";
  const base = `http://localhost:${port}`;
  const email = `bench-${Math.random().toString(36).slice(2, 10)}@example.com`;
  expectStatus(await request({ port, method: "POST", path: "/v1/auth/request-link", headers: { "cf-connecting-ip": ip }, json: { email } }), 200, "request-link");
  const mail = expectStatus(await request({ port, path: `/__dev/mail?to=${encodeURIComponent(email)}`, headers: { "cf-connecting-ip": ip } }), 200, "dev mail").json();
  const link = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(mail.messages?.[0]?.text ?? "")?.[0];
  if (!link) throw new Error("no sign-in link in the development outbox");
  const verify = new URL(link);
  const verified = expectStatus(await request({ port, path: verify.pathname + verify.search, headers: { "cf-connecting-ip": ip } }), 302, "verify");
  const cookie = [verified.headers["set-cookie"] ?? []].flat().map((c) => c.split(";")[0]).find((c) => c.startsWith("relay_session="));
  if (!cookie) throw new Error("the sign-in link set no relay_session cookie");
  const code = expectStatus(await request({ port, method: "POST", path: "/v1/self/claim-codes", headers: { cookie, origin: base, "cf-connecting-ip": ip } }), 201, "claim code").json().code;
  const key = expectStatus(await request({ port, method: "POST", path: "/v1/register", headers: { "cf-connecting-ip": ip }, json: { name: "bench" } }), 201, "register").json().api_key;
  const auth = { authorization: `Bearer ${key}`, "cf-connecting-ip": ip };
  expectStatus(await request({ port, method: "POST", path: "/v1/agents/claim", headers: auth, json: { code } }), 200, "claim");
  const app = expectStatus(await request({ port, method: "POST", path: "/v1/apps", headers: auth, json: { html: "<p>bench</p>", manifest } }), 201, "deploy").json();
  const slug = app.slug ?? (app.url ? new URL(app.url).hostname.split(".")[0] : undefined);
  if (!slug) throw new Error(`the deploy answer named no slug: ${JSON.stringify(app)}`);
  return { key, auth, appId: app.app_id, slug, email };
}

// ---------------------------------------------------------------------------------------
// (a) creates per second

async function benchCreates(relay, app, baseline) {
  console.log(`\n(a) row creates per second: ${CREATES} creates × ${ROUNDS} rounds at ${CONCURRENCIES.join(" and ")} connections`);
  console.log(`    Requests: the relay's ${whereSent(relay)}, the bare ones ${whereSent(baseline)}.`);
  const relayPath = `/v1/apps/${app.appId}/collections/items`;
  const created = (what, res) => {
    if (res.status !== 201) throw new Error(`${what} answered ${res.status}: ${res.text.slice(0, 300)}`);
  };
  const item = (i) => ({ title: `item ${i}`, n: i, tag: i % 2 ? "a" : "b" });
  // Each target's server CPU (its workerd processes), read around every timed run.
  const bareCpu = serverCpu(baseline.child.pid);
  const relayCpu = serverCpu(relay.child.pid);
  const targets = {
    fetch: { label: "bare insert, request forwarded (stub.fetch)", cpu: bareCpu, run: async (i) => created("baseline insert", await request({ ...directRequest(baseline), method: "POST", path: "/rows", json: item(i) })) },
    rpc: { label: "bare insert, RPC call (as the relay calls)", cpu: bareCpu, run: async (i) => created("baseline RPC insert", await request({ ...directRequest(baseline), method: "POST", path: "/rows/rpc", json: item(i) })) },
    relay: { label: "relay: auth + validate + create", cpu: relayCpu, run: async (i) => created("relay create", await request({ ...directRequest(relay), method: "POST", path: relayPath, headers: app.auth, json: { data: item(i) } })) },
  };
  const names = Object.keys(targets);
  const best = (xs) => Math.max(...xs);
  const least = (xs) => Math.min(...xs);
  const results = [];
  for (const concurrency of CONCURRENCIES) {
    // Warm every target (module load, DO start, SQLite file, keep-alive sockets).
    const warm = Math.min(200, CREATES);
    for (const name of names) await drive(warm, concurrency, targets[name].run);
    const rates = Object.fromEntries(names.map((name) => [name, []]));
    const cpus = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which goes first so none always runs on a warmer machine.
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length];
        const cpuBefore = targets[name].cpu?.();
        const wall = await drive(CREATES, concurrency, targets[name].run);
        rates[name].push((CREATES / wall) * 1000);
        if (cpuBefore !== undefined) cpus[name].push((targets[name].cpu() - cpuBefore) / CREATES);
      }
    }
    const bare = Math.max(best(rates.fetch), best(rates.rpc));
    const ratio = best(rates.relay) / bare;
    const measuredCpu = cpus.relay.length > 0;
    console.log(`  ${concurrency} connections:`);
    table([
      ["target", ...rates.relay.map((_, i) => `round ${i + 1}`), "best", ...(measuredCpu ? ["server CPU per create (least)"] : [])],
      ...names.map((name) => [targets[name].label, ...rates[name].map((r) => `${r.toFixed(0)}/s`), `${best(rates[name]).toFixed(0)}/s`,
        ...(measuredCpu ? [`${least(cpus[name]).toFixed(2)} ms`] : [])]),
    ]);
    console.log(`  ratio relay/bare at ${concurrency}: ${ratio.toFixed(2)} against the faster bare insert (goal ≥ 1.0) ${ratio >= 1 ? "met" : "not met"}; ` +
      `${(best(rates.relay) / best(rates.fetch)).toFixed(2)} against the forwarded request`);
    if (measuredCpu) {
      const cpuRatio = least(cpus.relay) / Math.min(least(cpus.fetch), least(cpus.rpc));
      console.log(`  server CPU per create relay/bare at ${concurrency}: ${cpuRatio.toFixed(2)} against the cheaper bare insert (goal ≤ 1.25) ${cpuRatio <= 1.25 ? "met" : "not met"}`);
    }
    results.push({ concurrency, relay: best(rates.relay), baseline: bare, ratio });
  }
  if (PROFILE) await profiled(relay.inspectorPort, PROFILE, () => drive(CREATES, CONCURRENCIES[0], targets.relay.run));
  return results;
}

// ---------------------------------------------------------------------------------------
// (b) write → watcher delivery

function loopbackLookup(_hostname, options, callback) {
  if (options && options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
}

/** Close codes of watchers the relay closed after they were caught up. */
const closedWatchers = [];

/**
 * Socket options that connect to `target.socketPort` (the runtime's own port, past
 * wrangler's proxy: scripts/runtime-port.mjs) when it has one, while the URL, and so the
 * Host the Worker routes by, stays the one wrangler answers on.
 */
function directConnection(target) {
  return target.socketPort ? { createConnection: () => net.connect({ host: "127.0.0.1", port: target.socketPort }) } : {};
}

/**
 * Whether `port` answers GET `probePath` within three tries of 5 s. After the long (b)
 * rounds on the runtime's own ports, wrangler's proxy has sat idle for minutes, and in two
 * of five whole runs it then answered nothing more while the runtime behind it still did.
 */
async function answersSoon(port, probePath) {
  for (let attempt = 0; attempt < 3; attempt++) if (await answers(port, 5_000, probePath)) return true;
  return false;
}

/** Stops a `wrangler dev` and waits (up to 10 s) for it to exit. */
async function stopped(target) {
  const exited = target.child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => target.child.once("exit", resolve));
  target.stop();
  await Promise.race([exited, sleep(10_000)]);
}

/** Says where requests to `target` go, for the tables' headings. */
function whereSent(target) {
  return target.socketPort ? "on its runtime's own port" : "through wrangler's proxy";
}

/** Where a request to `target` goes: its runtime's own port when it has one, with the Host wrangler answers on. */
function directRequest(target) {
  return target.socketPort ? { port: target.socketPort, host: `localhost:${target.port}` } : { port: target.port };
}

/** Opens one feed socket, subscribes from the head, resolves once caught up (within `timeoutMs`). */
function openWatcher(relay, app, onEntries, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${app.slug}.localhost:${relay.port}/_svc/ws`, ["service.v1", `service.agentkey.${app.key}`], {
      lookup: loopbackLookup, handshakeTimeout: timeoutMs, perMessageDeflate: false, ...directConnection(relay),
    });
    let ready = false;
    const timer = setTimeout(() => { ws.terminate(); reject(new Error(`a watcher was not caught up within ${timeoutMs / 1000} s`)); }, timeoutMs);
    ws.on("message", (raw) => {
      const now = performance.now();
      let frame;
      try { frame = JSON.parse(String(raw)); } catch { return; }
      if (frame.type === "hello") {
        ws.send(JSON.stringify({ type: "sub", since: Number(frame.seq) || 0 }));
      } else if (frame.type === "batch") {
        if (frame.entries?.length) onEntries(frame.entries, now);
        if (frame.truncated) ws.send(JSON.stringify({ type: "sub", since: frame.cursor }));
        else if (!ready) { ready = true; clearTimeout(timer); resolve(ws); }
      } else if (frame.type === "entry") {
        onEntries([frame.entry], now);
      } else if (frame.type === "error") {
        clearTimeout(timer);
        reject(new Error(`a watcher got an error frame: ${JSON.stringify(frame.error)}`));
      }
    });
    ws.on("error", (e) => { clearTimeout(timer); reject(e); });
    ws.on("close", (code) => {
      if (!ready) { clearTimeout(timer); reject(new Error(`a watcher closed before catching up (${code})`)); }
      else if (!ws.closedByBench) closedWatchers.push(code);
    });
  });
}

/** Opens one socket on the baseline's broadcasting Durable Object; resolves once open. */
function openBareWatcher(baseline, onEntries) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://localhost:${baseline.port}/ws`, { lookup: loopbackLookup, handshakeTimeout: 30_000, perMessageDeflate: false, ...directConnection(baseline) });
    ws.on("open", () => resolve(ws));
    ws.on("message", (raw) => {
      const now = performance.now();
      const frame = JSON.parse(String(raw));
      if (frame.type === "entry") onEntries([frame.entry], now);
    });
    ws.on("error", reject);
  });
}

async function benchWatchers(relay, app, baseline) {
  const targets = [
    {
      name: "relay",
      open: (onEntries, timeoutMs) => openWatcher(relay, app, onEntries, timeoutMs),
      write: (n) => request({ ...directRequest(relay), method: "POST", path: `/v1/apps/${app.appId}/collections/pings`, headers: app.auth, json: { data: { title: "ping", n } } }),
      created: 201,
    },
    {
      name: "bare",
      open: (onEntries) => openBareWatcher(baseline, onEntries),
      write: (n) => request({ ...directRequest(baseline), method: "POST", path: "/rows", json: { title: "ping", n } }),
      created: 201,
    },
  ];
  console.log(`\n(b) write → watcher delivery: ${WATCH_WRITES} timed writes per size after ${WATCH_WARMUP} untimed, one at a time; latency from sending the POST to the frame's arrival at each watcher.`);
  console.log("    \"bare\" is the baseline DO sending one frame to every socket after its insert: the floor this machine, wrangler dev and one client reading every socket set.");
  console.log(`    Sockets and writes: the relay's ${whereSent(relay)}, the bare one's ${whereSent(baseline)}.`);
  const rows = [["watchers", "target", "deliveries", "first p50", "delivery p50", "delivery p99", "write ack p50", "write ack p99", "p99 / bare p99", "goal"]];
  const results = [];
  for (const size of [...WATCHERS].sort((a, b) => a - b)) {
    const measured = {};
    for (const t of targets) measured[t.name] = await watchRound(t, size);
    for (const t of targets) {
      const m = measured[t.name];
      rows.push([String(size), t.name, `${m.deliveries}${m.missed ? ` (${m.missed} missed)` : ""}${m.duplicates ? ` (${m.duplicates} twice)` : ""}`, ms(m.firstP50), ms(m.p50), ms(m.p99), ms(m.ackP50), ms(m.ackP99),
        (m.p99 / measured.bare.p99).toFixed(2), t.name === "relay" ? `p99 ≤ 1.1× bare: ${m.p99 <= 1.1 * measured.bare.p99 ? "met" : "not met"}` : ""]);
    }
    results.push({ size, ...measured });
  }
  if (results.length) {
    table(rows);
    console.log(`  the slowest of the ${WATCH_WARMUP} untimed writes just after each round's sockets opened (ack or last delivery): ` +
      results.map((r) => `${r.size}: relay ${ms(r.relay.warmupSlowest)}, bare ${ms(r.bare.warmupSlowest)}`).join("; "));
  }
  if (PROFILE && WATCHERS.length) {
    const size = Math.max(...WATCHERS);
    console.log(`  one more relay round of ${size} sockets under the CPU profiler:`);
    await profiled(relay.inspectorPort, PROFILE, () => watchRound(targets[0], size));
  }
  if (CROWD) results.push({ crowd: await crowdRound(relay, targets[0]) });
  if (closedWatchers.length) console.log(`  ${closedWatchers.length} watcher socket(s) were closed by the relay during the run (codes ${[...new Set(closedWatchers)].join(", ")})`);
  return results;
}

/**
 * `size` sockets on one target, `writes` timed writes (after `warmup` untimed), then the sockets
 * closed. Each write waits up to `waitMs` for every watcher to have it; every watcher's
 * receipt of every write is counted, so `missed` is the writes × watchers that never came
 * (after a last wait of up to `waitMs` for stragglers) and `duplicates` those that came twice.
 */
async function watchRound(t, size, { writes = WATCH_WRITES, warmup = WATCH_WARMUP, waitMs = 3_000, openMs = 30_000, progress = false } = {}) {
  const sockets = [];
  const closeAll = () => {
    for (const ws of sockets.splice(0)) {
      ws.closedByBench = true;
      try { ws.terminate(); } catch { /* gone */ }
    }
  };
  cleanups.push(closeAll);
  // `sent[n]` is when write n left; `received[n][w]` how often watcher w got it; `seen[n]` how many watchers have it.
  const sent = new Map();
  const received = new Map();
  const seen = new Map();
  let duplicates = 0;
  let latencies = [];
  // The first watcher's latency per write: the gap to p99 is the time spent sending to,
  // and reading on this one client, all the others.
  let firsts = [];
  let waiting = null;
  const onEntries = (watcher, entries, now) => {
    for (const e of entries) {
      if (e.collection_name !== "pings" || e.op !== "create") continue;
      const n = e.data?.n;
      const marks = received.get(n);
      if (!marks) continue;
      if (marks[watcher]++ > 0) { duplicates++; continue; }
      latencies.push(now - sent.get(n));
      const count = (seen.get(n) ?? 0) + 1;
      seen.set(n, count);
      if (count === 1) firsts.push(now - sent.get(n));
      if (count === size && waiting?.n === n) waiting.resolve();
    }
  };
  // Grow the pool to `size` sockets, opening at most 50 at a time.
  const opening = performance.now();
  while (sockets.length < size) {
    const first = sockets.length;
    const batch = Math.min(50, size - first);
    sockets.push(...(await Promise.all(Array.from({ length: batch }, (_, i) => t.open((entries, now) => onEntries(first + i, entries, now), openMs)))));
    if (progress && sockets.length % 1000 === 0) console.log(`    ${sockets.length} open and caught up after ${((performance.now() - opening) / 1000).toFixed(0)} s`);
  }
  const acks = [];
  let warmupSlowest = 0;
  const everyone = (n) => new Promise((resolve) => { waiting = { n, resolve }; });
  for (let i = 0; i < writes + warmup; i++) {
    const n = ++watchSeq;
    const done = everyone(n);
    received.set(n, new Uint8Array(size));
    const t0 = performance.now();
    sent.set(n, t0);
    const res = await t.write(n);
    if (res.status !== t.created) throw new Error(`${t.name}: watched write answered ${res.status}: ${res.text.slice(0, 300)}`);
    const ack = performance.now() - t0;
    await Promise.race([done, sleep(waitMs)]);
    waiting = null;
    if (i < warmup) { // warm-up writes, not timed; the slowest is reported apart
      warmupSlowest = Math.max(warmupSlowest, Math.max(ack, ...latencies));
      latencies = []; firsts = []; continue;
    }
    acks.push(ack);
  }
  // Stragglers: wait (bounded) until every watcher has every write.
  const deadline = performance.now() + waitMs;
  while (performance.now() < deadline && [...received.keys()].some((n) => (seen.get(n) ?? 0) < size)) await sleep(50);
  const missed = [...received.keys()].reduce((sum, n) => sum + size - (seen.get(n) ?? 0), 0);
  closeAll();
  return {
    writes: received.size, deliveries: latencies.length, missed, duplicates, firstP50: percentile(firsts, 50), p50: percentile(latencies, 50), p99: percentile(latencies, 99),
    ackP50: percentile(acks, 50), ackP99: percentile(acks, 99), warmupSlowest,
  };
}

/**
 * CROWD sockets on one app, CROWD_WRITES writes: no missed delivery is the goal (issue 16),
 * so a miss fails the bench. Like every (b) socket they are opened on the runtime's own
 * port, past wrangler's proxy (scripts/runtime-port.mjs: through the proxy a socket holds
 * about seven descriptors, directly about one in the runtime and one here). Where that port
 * cannot be found the sockets go through the proxy, and when `ulimit -n` cannot hold CROWD
 * of them the run says so and takes the most it can.
 */
const FDS_PER_SOCKET = { direct: 2, proxied: 7 };
async function crowdRound(relay, relayTarget) {
  const direct = relay.socketPort !== null;
  const perSocket = direct ? FDS_PER_SOCKET.direct : FDS_PER_SOCKET.proxied;
  const limit = Number(spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim());
  const fits = Number.isFinite(limit) ? Math.floor((limit - 2000) / perSocket / 100) * 100 : CROWD;
  const size = Math.min(CROWD, fits);
  if (size < CROWD) {
    console.log(`\n    ${CROWD} watchers need about ${CROWD * perSocket + 2000} open files (${perSocket} per socket${direct ? "" : " through wrangler's proxy"}); ulimit -n is ${limit} here, so this run takes ${size} (raise the limit for ${CROWD})`);
  }
  if (size < 1) return null;
  console.log(`\n    ${size} watchers on one app (relay only, ${whereSent(relay)}), ${CROWD_WRITES} writes (after ${CROWD_WARMUP} untimed) one at a time, each waiting up to 15 s for every watcher:`);
  const m = await watchRound(relayTarget, size, { writes: CROWD_WRITES, warmup: CROWD_WARMUP, waitMs: 15_000, openMs: 120_000, progress: true });
  console.log(`  ${m.writes} writes × ${size} watchers: ${m.writes * size - m.missed} deliveries, delivery p50 ${ms(m.p50)}, p99 ${ms(m.p99)}, first p50 ${ms(m.firstP50)}, write ack p50 ${ms(m.ackP50)}`);
  console.log(`  missed deliveries: ${m.missed}${m.duplicates ? `, duplicated: ${m.duplicates}` : ""}`);
  if (m.missed > 0 || m.duplicates > 0) throw new Error(`${size} watchers: ${m.missed} missed and ${m.duplicates} duplicated deliveries (goal: none)`);
  return { size, ...m };
}

let watchSeq = 0;

// ---------------------------------------------------------------------------------------
// (c) list of 1,000 rows with where + sort

async function benchList(relay, app, baseline) {
  console.log(`\n(c) list ${LIST_ROWS} rows with where + sort, ${LIST_RUNS} runs each (after 3 warm-up runs)`);
  const B = `/v1/apps/${app.appId}/collections/docs`;
  await drive(LIST_ROWS, CONCURRENCY, async (i) => {
    expectStatus(await request({ ...directRequest(relay), method: "POST", path: B, headers: app.auth, json: { data: { title: `doc ${i}`, n: i, tag: "a", t: Math.random() } } }), 201, "seed row");
  });
  // The baseline holds what (a) inserted; top it up when (a) ran with fewer creates.
  const held = expectStatus(await request({ ...directRequest(baseline), path: `/rows?limit=${LIST_ROWS}` }), 200, "baseline count").json().rows.length;
  await drive(LIST_ROWS - held, CONCURRENCY, async (i) => {
    expectStatus(await request({ ...directRequest(baseline), method: "POST", path: "/rows", json: { title: `doc ${i}`, n: i, tag: "a" } }), 201, "baseline row");
  });
  const q = encodeURIComponent(JSON.stringify({ where: [{ field: "tag", op: "eq", value: "a" }, { field: "n", op: "gte", value: 0 }], sort: [{ field: "t", dir: "desc" }] }));
  const variants = [
    ["relay: where + sort", { ...directRequest(relay), path: `${B}?limit=${LIST_ROWS}&q=${q}`, headers: app.auth }],
    ["relay: no where, no sort", { ...directRequest(relay), path: `${B}?limit=${LIST_ROWS}`, headers: app.auth }],
    ["bare Worker→DO→SQLite SELECT", { ...directRequest(baseline), path: `/rows?limit=${LIST_ROWS}` }],
  ];
  const timings = new Map(variants.map(([name]) => [name, []]));
  for (let run = 0; run < LIST_RUNS + 3; run++) {
    for (const [name, req] of variants) {
      const t0 = performance.now();
      const res = expectStatus(await request(req), 200, name);
      const took = performance.now() - t0;
      const count = res.json().rows.length;
      if (count !== LIST_ROWS) throw new Error(`${name} returned ${count} rows, expected ${LIST_ROWS}`);
      if (run >= 3) timings.get(name).push(took);
    }
  }
  const p50 = (name) => percentile(timings.get(name), 50);
  const rows = [["list", "p50", "p99", "ratio to where + sort"]];
  for (const [name] of variants) rows.push([name, ms(p50(name)), ms(percentile(timings.get(name), 99)), (p50("relay: where + sort") / p50(name)).toFixed(2)]);
  table(rows);
  return Object.fromEntries([...timings.keys()].map((name) => [name, p50(name)]));
}

// ---------------------------------------------------------------------------------------
// (d) CLI start-up

async function benchCli(relay) {
  console.log(`\n(d) CLI start-up: wall time of a whole process, ${CLI_RUNS} runs each (after 1 warm-up), taken in turns`);
  const built = await ensureCliBundle();
  if (built) console.log(`  (rebuilt dist/cli/service.mjs first: ${built})`);
  const cli = path.join(root, "bin", "service");
  // A config home of its own, so no profile of the user's is read or written.
  const home = tempDir("cli");
  const env = { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: home };
  const targets = [
    { label: "node -e 0", file: process.execPath, args: ["-e", "0"] },
    { label: "service --help", file: cli, args: ["--help"] },
    { label: "service skill version", file: cli, args: ["skill", "version", "--url", relay.url] },
  ];
  const times = new Map(targets.map((t) => [t.label, []]));
  for (let run = 0; run <= CLI_RUNS; run++) {
    for (const t of targets) {
      const t0 = performance.now();
      const res = spawnSync(t.file, t.args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], timeout: 30_000, encoding: "utf8" });
      const took = performance.now() - t0;
      if (res.error || res.status !== 0) throw new Error(`${t.label} failed (${res.error?.message ?? `exit ${res.status}`}): ${String(res.stderr).slice(0, 500)}`);
      if (run > 0) times.get(t.label).push(took);
    }
  }
  const node = percentile(times.get("node -e 0"), 50);
  const rows = [["command", "p50", "min", "max", "p50 − node -e 0", "goal"]];
  for (const t of targets) {
    const xs = times.get(t.label);
    const p50 = percentile(xs, 50);
    rows.push([t.label, ms(p50), ms(Math.min(...xs)), ms(Math.max(...xs)), t.label === "node -e 0" ? "" : ms(p50 - node),
      t.label.startsWith("service") ? `p50 < 150 ms: ${p50 < 150 ? "met" : "not met"}` : ""]);
  }
  table(rows);
  return Object.fromEntries([...times].map(([label, xs]) => [label, percentile(xs, 50)]));
}

// ---------------------------------------------------------------------------------------
// (e) write → signed webhook received

async function benchWebhooks(relay, app, baseline, receiver) {
  console.log(`\n(e) write → signed webhook received at a loopback receiver (${HOOK_WRITES} writes per run)`);
  const hooked = {
    ...manifest,
    "x-service-manifest": { ...manifest["x-service-manifest"], webhooks: [{ on: "create", collection: "pings", url: `${receiver.url}/relay` }] },
  };
  const deployed = expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/apps", headers: app.auth, json: { html: "<p>hooks</p>", manifest: hooked } }), 201, "deploy with webhooks").json();
  receiver.setSecret(deployed.webhook_secret);
  const rows = [["writers", "relay p50", "relay p99", "relay /s", "missing", "bare p50", "bare p99", "bare /s"]];
  for (const writers of HOOK_WRITERS) {
    const relayRun = await measureDeliveries({
      writes: HOOK_WRITES, concurrency: writers, prefix: `relay-${writers}`, receiver,
      send: async (mark) => expectStatus(await request({ port: relay.port, method: "POST", path: `/v1/apps/${deployed.app_id}/collections/pings`, headers: app.auth, json: { data: { title: mark, n: 1 } } }), 201, "create"),
    });
    const bareRun = await measureDeliveries({
      writes: HOOK_WRITES, concurrency: writers, prefix: `bare-${writers}`, receiver,
      send: async (mark) => expectStatus(await request({ port: baseline.port, method: "POST", path: "/hooked", json: { title: mark } }), 202, "enqueue"),
    });
    rows.push([writers, ms(percentile(relayRun.latencies, 50)), ms(percentile(relayRun.latencies, 99)), relayRun.perSecond.toFixed(1),
      relayRun.missing, ms(percentile(bareRun.latencies, 50)), ms(percentile(bareRun.latencies, 99)), bareRun.perSecond.toFixed(1)]);
  }
  table(rows);
  console.log(`  signatures that did not verify: ${receiver.badSignatures()}`);
  console.log("  the relay journals each delivery in D1 (a consumer batch reads what it needs in one D1 batch beside the outbox read, records all of an app's deliveries, their cap count and first claims in a second, and writes their outcomes in shared batches) and hands its outbox to the queue on commit; the bare path journals nothing. Locally one consumer takes one batch at a time, so the round trips in a row before a batch's sends set the rate");
}

// ---------------------------------------------------------------------------------------
// (f) notify email throughput into the development outbox

async function benchNotify(relay, app) {
  console.log(`\n(f) notify: ${NOTIFY_WRITES} creates, each mailing the owner, until all are in the development outbox`);
  const notifying = {
    ...manifest,
    "x-service-manifest": { ...manifest["x-service-manifest"], notify: [{ on: "create", collection: "pings", to: ["owner"], subject: "{{title}}", body: "{{title}} was added" }] },
  };
  const deployed = expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/apps", headers: app.auth, json: { html: "<p>notify</p>", manifest: notifying } }), 201, "deploy with notify").json();
  const marks = Array.from({ length: NOTIFY_WRITES }, (_, i) => `notify-${i}-${Math.random().toString(36).slice(2, 8)}`);
  const started = performance.now();
  const writeMs = await drive(marks.length, 10, async (i) => {
    expectStatus(await request({ port: relay.port, method: "POST", path: `/v1/apps/${deployed.app_id}/collections/pings`, headers: app.auth, json: { data: { title: marks[i], n: 1 } } }), 201, "create");
  });
  const seen = new Set();
  let mails = 0;
  const deadline = performance.now() + 120_000;
  while (seen.size < marks.length && performance.now() < deadline) {
    const outbox = expectStatus(await request({ port: relay.port, path: `/__dev/mail?to=${encodeURIComponent(app.email)}` }), 200, "dev mail").json().messages;
    const text = outbox.map((m) => `${m.subject}\n${m.text}`).join("\n");
    mails = outbox.filter((m) => /notify-/.test(`${m.subject}${m.text}`)).length;
    for (const mark of marks) if (text.includes(mark)) seen.add(mark);
    if (seen.size < marks.length) await sleep(100);
  }
  const allMs = performance.now() - started;
  table([
    ["creates", "written in", "all in the outbox after", "notifications/s", "mails (digests)", "missing"],
    [marks.length, ms(writeMs), ms(allMs), (seen.size / (allMs / 1000)).toFixed(1), mails, marks.length - seen.size],
  ]);
  console.log("  a recipient's mail waits for the digest window (3 s in development mode) so a burst becomes one digest");
}

// ---------------------------------------------------------------------------------------
// (g) ingest POST → row committed

/** `total` calls of `fn(i)` at `concurrency`: deliveries per second and each call's latency. */
async function timed(total, concurrency, fn) {
  const latencies = [];
  const wall = await drive(total, concurrency, async (i) => {
    const t0 = performance.now();
    await fn(i);
    latencies.push(performance.now() - t0);
  });
  return { perSecond: (total / wall) * 1000, latencies };
}

async function benchIngest(relay, app, baseline) {
  console.log(`\n(g) ingest POST → row committed: ${INGEST} deliveries per run to a hook URL, beside bare Worker→DO inserts`);
  const withHooks = {
    ...manifest,
    "x-service-manifest": {
      ...manifest["x-service-manifest"],
      ingest: [
        { name: "plain", collection: "items", map: { title: "issue.title", n: "issue.number" } },
        { name: "deduped", collection: "docs", map: { title: "issue.title", n: "issue.number" }, dedupeKey: "delivery" },
      ],
    },
  };
  const deployed = expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/apps", headers: app.auth, json: { html: "<p>ingest</p>", manifest: withHooks } }), 201, "deploy with ingest").json();
  const hooks = expectStatus(await request({ port: relay.port, path: `/v1/apps/${deployed.app_id}/ingest-hooks`, headers: app.auth }), 200, "ingest hooks").json().hooks;
  const pathOf = (name) => new URL(hooks.find((h) => h.name === name).url).pathname;
  let serial = 0;
  const body = () => {
    serial += 1;
    return { delivery: `d-${serial}-${Math.random().toString(36).slice(2, 8)}`, issue: { title: `issue ${serial}`, number: serial } };
  };
  const targets = [
    ["relay: hook POST (map, append)", async () => expectStatus(await request({ port: relay.port, method: "POST", path: pathOf("plain"), headers: { "cf-connecting-ip": "198.18.0.2" }, json: body() }), 200, "ingest")],
    ["relay: hook POST (map, dedupeKey)", async () => expectStatus(await request({ port: relay.port, method: "POST", path: pathOf("deduped"), headers: { "cf-connecting-ip": "198.18.0.2" }, json: body() }), 200, "ingest")],
    ["bare insert, RPC call", async () => expectStatus(await request({ port: baseline.port, method: "POST", path: "/rows/rpc", json: body() }), 201, "baseline insert")],
  ];
  for (const [, run] of targets) await drive(Math.min(50, INGEST), 4, run);
  const rows = [["target", "concurrency", "deliveries/s", "p50", "p99"]];
  for (const concurrency of INGEST_CONCURRENCY) {
    for (const [label, run] of targets) {
      const result = await timed(INGEST, concurrency, run);
      rows.push([label, concurrency, result.perSecond.toFixed(0), ms(percentile(result.latencies, 50)), ms(percentile(result.latencies, 99))]);
    }
  }
  table(rows);
  const counts = expectStatus(await request({ port: relay.port, path: `/v1/apps/${deployed.app_id}/ingest-hooks`, headers: app.auth }), 200, "ingest hooks").json().hooks
    .map((h) => `${h.name}: ${h.deliveries.accepted} accepted, ${h.deliveries.failed} failed, ${h.deliveries.dropped_duplicate} duplicate`);
  console.log(`  journal: ${counts.join("; ")}`);
  console.log("  a hook POST is answered once its row, feed entry and outbox are committed; one D1 read (hook, app, hourly count) before, the accepted journal entry written just after (a dedupeKey adds its claim, one D1 write, before the store call)");
}

// ---------------------------------------------------------------------------------------

/** The isolate's JS heap (MiB used and held) once it has answered its first request; null when the inspector does not answer. */
async function heapAfterStart(inspectorPort) {
  try {
    const inspector = await openInspector(inspectorPort);
    try {
      return await inspector.heap();
    } finally {
      inspector.close();
    }
  } catch {
    return null;
  }
}

async function main() {
  const started = performance.now();
  console.log("starting the relay and the baseline (wrangler dev, same node_modules, loopback)…");
  const relayPort = await freePort();
  // Both inspectors are open for section (j)'s heap figure (and the relay's for a profile).
  const inspectorPort = await freePort();
  const relayState = tempDir("relay");
  const migrating = performance.now();
  applyMigrations(relayState, { stdio: "ignore" });
  const migrations = (performance.now() - migrating) / 1000;
  const relaySpawned = performance.now();
  const relayOptions = {
    port: relayPort, inspectorPort, persistTo: relayState, stdio: "pipe", migrate: false, testScheduled: false,
    // A profile names functions only when the bundle keeps them (the figures then come from
    // the unminified Worker too, which the profile run says).
    minify: !PROFILE,
    // The per-app quotas would stop a benchmark long before it measures anything.
    vars: { MAX_ROWS_PER_APP: "10000000", MAX_STORAGE_BYTES_PER_APP: "10000000000", INGEST_APP_HOURLY_CAP: "10000000", AGENT_TASKS_APP_HOURLY_CAP: "10000000", MAX_BLOBS_PER_ACCOUNT_BYTES: "100000000000" },
  };
  let relay = { ...await startRelay(relayOptions), inspectorPort };
  const starts = { relay: (performance.now() - relaySpawned) / 1000, baseline: 0, migrations };
  cleanups.push(relay.stop);
  const receiver = await startHookReceiver();
  cleanups.push(() => { void receiver.close(); });
  const baselineSpawned = performance.now();
  const baselineInspectorPort = await freePort();
  let baseline = await startBaseline(receiver.url, baselineInspectorPort);
  starts.baseline = (performance.now() - baselineSpawned) / 1000;
  if (runs("j")) starts.heap = { relay: await heapAfterStart(inspectorPort), baseline: await heapAfterStart(baselineInspectorPort) };
  const app = await setUpApp(relay.port);
  console.log(`relay on 127.0.0.1:${relay.port}, baseline on 127.0.0.1:${baseline.port}, app ${app.slug}`);
  // (a), (b) and (c) go to each runtime's own port, past wrangler's dev proxy (scripts/runtime-port.mjs).
  const direct = async () => [
    { ...relay, socketPort: await runtimePort(relay.child.pid, relay.port, "/v1/auth/status") },
    { ...baseline, socketPort: await runtimePort(baseline.child.pid, baseline.port, "/health") },
  ];
  let [relayDirect, baselineDirect] = await direct();
  if (runs("a") && CONCURRENCIES.length) await benchCreates(relayDirect, app, baselineDirect);
  if (runs("b") && (WATCHERS.length || CROWD)) {
    await benchWatchers(relayDirect, app, baselineDirect);
    // The later sections go through wrangler's proxy; one that stopped answering is started
    // again on the same state (the runtime behind it is asked first, to say whether it still answers).
    if (!(await answersSoon(relay.port, "/v1/auth/status"))) {
      const runtime = relayDirect.socketPort !== null && await answersSoon(relayDirect.socketPort, "/v1/auth/status");
      console.log(`  wrangler's proxy for the relay stopped answering after (b) (its runtime ${runtime ? "still answered" : "did not answer either"}); starting wrangler dev again on the same state`);
      await stopped(relay);
      const restartInspector = await freePort();
      relay = { ...await startRelay({ ...relayOptions, port: await freePort(), inspectorPort: restartInspector }), inspectorPort: restartInspector };
      cleanups.push(relay.stop);
      [relayDirect, baselineDirect] = await direct();
    }
    if (!(await answersSoon(baseline.port, "/health"))) {
      console.log("  wrangler's proxy for the baseline stopped answering after (b); starting it again");
      await stopped(baseline);
      baseline = await startBaseline(receiver.url, await freePort());
      [relayDirect, baselineDirect] = await direct();
    }
  }
  if (runs("c")) await benchList(relayDirect, app, baselineDirect);
  if (runs("d")) await benchCli(relay);
  if (runs("e") && HOOK_WRITERS.length) await benchWebhooks(relay, app, baseline, receiver);
  if (runs("f") && NOTIFY_WRITES > 0) await benchNotify(relay, app);
  // (g) stays behind the proxy: on the runtime's own port the relay's ingest POSTs stalled
  // for seconds at 16 senders while the handler itself was quick (docs/performance.md).
  if (runs("g") && INGEST_CONCURRENCY.length) await benchIngest(relay, app, baseline);
  if (runs("h")) await benchTasks({ request, expectStatus, percentile, ms, table, drive, openBareWatcher, measureDeliveries, manifest }, relay, app, baseline, receiver, { writes: TASK_WRITES, tasks: TASKS });
  if (runs("i") && UPLOAD_SIZES.length) await benchAttachments({ request, expectStatus, percentile, table }, relay, app, baseline, { runs: UPLOAD_RUNS, sizes: UPLOAD_SIZES });
  if (runs("j")) benchSize({ root, wrangler, env: quietEnv, table }, starts);
  console.log(`\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

main().then(() => {
  cleanup();
  process.exit(0);
}, (err) => {
  console.error(`\nbench failed: ${err?.stack ?? err}`);
  cleanup();
  process.exit(1);
});
