// Soak (issue 16, Faults; not a CI test): starts a relay of its own on loopback and drives
// mixed traffic at it for SOAK_MINUTES (default 10) — row creates and deletes (the live
// set stays near WINDOW rows), list and single-row reads, feed sockets on the app origin,
// feed long-polls and a redeploy every DEPLOY_EVERY_S seconds — then stops by itself.
// Every minute it prints each kind's count, p50 and p99 latency, errors, socket frames,
// long-poll returns and the resident memory of the relay's workerd processes, so whether
// latency and memory stay flat from the first minute to the last can be read off; the
// last line sets the final minute beside the first. docs/performance.md, "Soak".
//
//   SOAK_MINUTES=3 node scripts/soak.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { freePort, startRelay } from "./relay-process.mjs";

/** A setting from the environment: a positive number, else `fallback`. */
function positive(name, fallback) {
  const value = Number(process.env[name]?.trim() || fallback);
  if (Number.isFinite(value) && value > 0) return value;
  throw new Error(`${name} must be a positive number, got ${process.env[name]}`);
}
const MINUTES = positive("SOAK_MINUTES", 10);
const WRITERS = positive("SOAK_WRITERS", 4);
const READERS = positive("SOAK_READERS", 2);
const SOCKETS = positive("SOAK_SOCKETS", 20);
const LONG_POLLS = positive("SOAK_LONG_POLLS", 4);
const DEPLOY_EVERY_S = positive("SOAK_DEPLOY_EVERY_S", 30);
/** Live rows kept: each create past this many deletes the oldest. */
const WINDOW = 1000;
const LOOPBACK = "127.0.0.1";

const manifest = {
  $defs: { Item: { type: "object", properties: { n: { type: "integer" }, text: { type: "string", maxLength: 200 } }, required: ["n"] } },
  "x-service-manifest": {
    app: { name: "Soak" },
    collections: { items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

// ---- the client: fetch (keep-alive) to the relay on loopback ----
async function send(port, method, pathName, { headers = {}, json } = {}) {
  const res = await fetch(`http://localhost:${port}${pathName}`, {
    method, redirect: "manual", signal: AbortSignal.timeout(60_000),
    headers: { ...(json === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
function answered(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text || "{}");
}

/** A claimed agent through the development outbox, and one app. */
async function setUp(port) {
  const ip = "198.18.7.1";
  const email = `soak-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const plain = { "cf-connecting-ip": ip };
  answered(await send(port, "POST", "/v1/auth/request-link", { headers: plain, json: { email } }), 200, "sign-in link");
  const mail = answered(await send(port, "GET", `/__dev/mail?to=${encodeURIComponent(email)}`, { headers: plain }), 200, "outbox");
  const link = new URL(/https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(mail.messages?.[0]?.text ?? "")?.[0] ?? "http://x/none");
  const verified = await send(port, "GET", link.pathname + link.search, { headers: plain });
  const cookie = verified.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("relay_session="));
  if (!cookie) throw new Error("signing in set no session cookie");
  const { code } = answered(await send(port, "POST", "/v1/self/claim-codes", { headers: { ...plain, cookie, origin: `http://localhost:${port}` } }), 201, "claim code");
  const { api_key: key } = answered(await send(port, "POST", "/v1/register", { headers: plain, json: { name: "soak" } }), 201, "register");
  const auth = { ...plain, authorization: `Bearer ${key}` };
  answered(await send(port, "POST", "/v1/agents/claim", { headers: auth, json: { code } }), 200, "claim");
  const app = answered(await send(port, "POST", "/v1/apps", { headers: auth, json: { html: "<p>soak 0</p>", manifest } }), 201, "deploy");
  return { auth, appId: app.app_id, slug: app.slug };
}

// ---- measurements, one bucket a minute ----
const started = Date.now();
let bucket = freshBucket();
const minutes = [];
function freshBucket() {
  return { latencies: { write: [], read: [], deploy: [] }, errors: 0, longPolls: 0, frames: 0 };
}
async function timed(kind, fn) {
  const t0 = performance.now();
  try {
    const res = await fn();
    if (res.status >= 300) bucket.errors += 1;
    else bucket.latencies[kind].push(performance.now() - t0);
  } catch {
    bucket.errors += 1;
  }
}
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Resident memory (MiB) of the workerd processes under the relay's process. */
function workerdRssMiB(rootPid) {
  const parents = new Map();
  const names = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      names.set(Number(entry), stat.slice(stat.indexOf("(") + 1, close));
      parents.set(Number(entry), Number(stat.slice(close + 2).split(" ")[1]));
    } catch { /* gone */ }
  }
  const under = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 20; p = parents.get(p) ?? 0, hops++) if (p === rootPid) return true;
    return false;
  };
  let kib = 0;
  for (const [pid, name] of names) {
    if (name !== "workerd" || !under(pid)) continue;
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch { /* gone */ }
  }
  return kib / 1024;
}

const ms = (v) => (Number.isFinite(v) ? v.toFixed(0).padStart(5) : "  n/a");
function closeMinute(index, rootPid) {
  const b = bucket;
  bucket = freshBucket();
  const row = { minute: index, rss: workerdRssMiB(rootPid), ...b };
  minutes.push(row);
  const part = (kind) => `${kind} ${String(b.latencies[kind].length).padStart(5)} p50 ${ms(percentile(b.latencies[kind], 50))} p99 ${ms(percentile(b.latencies[kind], 99))}`;
  console.log(`min ${String(index).padStart(2)} | ${part("write")} | ${part("read")} | ${part("deploy")} | long-polls ${b.longPolls} | frames ${b.frames} | errors ${b.errors} | workerd RSS ${row.rss.toFixed(0)} MiB`);
}

// ---- traffic ----
async function main() {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-soak-"));
  const port = await freePort();
  const relay = await startRelay({
    port, persistTo, stdio: "pipe", browser: false,
    vars: { MAX_ROWS_PER_APP: "10000000", MAX_STORAGE_BYTES_PER_APP: "10000000000" },
  });
  let stopping = false;
  const stopAll = () => {
    stopping = true;
    relay.stop();
    rmSync(persistTo, { recursive: true, force: true });
  };
  // Bounded whatever happens: a hard stop a few minutes past the planned end.
  const hardStop = setTimeout(() => {
    console.error("soak: hard stop");
    stopAll();
    process.exit(2);
  }, (MINUTES + 3) * 60_000);
  hardStop.unref();
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => { stopAll(); process.exit(130); });

  try {
    const { auth, appId, slug } = await setUp(port);
    const rowsPath = `/v1/apps/${appId}/collections/items`;
    console.log(`soak: relay on ${LOOPBACK}:${port} (pid ${relay.child.pid}), app ${slug}; ${MINUTES} min, ${WRITERS} writers, ${READERS} readers, ${SOCKETS} sockets, ${LONG_POLLS} long-polls, a redeploy every ${DEPLOY_EVERY_S} s`);
    console.log(`min  0 | workerd RSS ${workerdRssMiB(relay.child.pid).toFixed(0)} MiB before traffic`);
    const endAt = Date.now() + MINUTES * 60_000;
    const going = () => !stopping && Date.now() < endAt;
    let created = 0;

    const writer = async () => {
      while (going()) {
        const n = created++;
        await timed("write", () => send(port, "POST", rowsPath, { headers: auth, json: { key: `w-${n}`, data: { n, text: `row ${n}` } } }));
        if (n >= WINDOW) await timed("write", () => send(port, "DELETE", `${rowsPath}/w-${n - WINDOW}`, { headers: auth }));
      }
    };
    const reader = async () => {
      while (going()) {
        await timed("read", () => send(port, "GET", `${rowsPath}?limit=50`, { headers: auth }));
        await timed("read", () => send(port, "GET", `${rowsPath}/w-${Math.max(0, created - 10)}`, { headers: auth }).then((res) => (res.status === 404 ? { status: 200 } : res)));
      }
    };
    const longPoll = async () => {
      let cursor = 0;
      while (going()) {
        try {
          const res = await send(port, "GET", `/v1/apps/${appId}/feed?since=${cursor}&limit=500&wait=20`, { headers: auth });
          if (res.status !== 200) { bucket.errors += 1; continue; }
          cursor = JSON.parse(res.text).cursor ?? cursor;
          bucket.longPolls += 1;
        } catch {
          bucket.errors += 1;
        }
      }
    };
    const deployer = async () => {
      let version = 0;
      while (going()) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(DEPLOY_EVERY_S * 1000, Math.max(0, endAt - Date.now()))));
        if (!going()) return;
        version += 1;
        await timed("deploy", () => send(port, "POST", `/v1/apps/${appId}/versions`, { headers: auth, json: { html: `<p>soak ${version}</p>` } }));
      }
    };
    const sockets = [];
    const openSocket = () => {
      const ws = new WebSocket(`ws://${slug}.localhost:${port}/_svc/ws`, ["service.v1", `service.agentkey.${auth.authorization.slice(7)}`], {
        lookup: (_host, options, callback) => (options?.all ? callback(null, [{ address: LOOPBACK, family: 4 }]) : callback(null, LOOPBACK, 4)),
      });
      let cursor = 0;
      ws.on("message", (raw) => {
        const frame = JSON.parse(String(raw));
        if (frame.type === "hello") ws.send(JSON.stringify({ type: "sub", since: cursor }));
        if (frame.type === "batch" || frame.type === "entry") bucket.frames += 1;
        if (typeof frame.cursor === "number") cursor = frame.cursor;
        if (frame.entry?.seq) cursor = Math.max(cursor, frame.entry.seq);
      });
      ws.on("error", () => { bucket.errors += 1; });
      // A socket the relay closed (a redeploy may ask watchers to reconnect) is opened again.
      ws.on("close", () => { if (going()) setTimeout(openSocket, 500); });
      sockets.push(ws);
    };
    for (let i = 0; i < SOCKETS; i++) openSocket();

    let minute = 0;
    const ticker = setInterval(() => closeMinute(++minute, relay.child.pid), 60_000);
    await Promise.all([
      ...Array.from({ length: WRITERS }, writer), ...Array.from({ length: READERS }, reader),
      ...Array.from({ length: LONG_POLLS }, longPoll), deployer(),
    ]);
    clearInterval(ticker);
    if (minutes.length < Math.floor(MINUTES)) closeMinute(++minute, relay.child.pid);
    for (const ws of sockets) ws.terminate();

    const first = minutes[0];
    const last = minutes[minutes.length - 1];
    const ratio = (kind, p) => (percentile(last.latencies[kind], p) / percentile(first.latencies[kind], p)).toFixed(2);
    console.log(`soak: ${created} creates; last minute against the first: write p50 ×${ratio("write", 50)} p99 ×${ratio("write", 99)}, read p50 ×${ratio("read", 50)} p99 ×${ratio("read", 99)}; workerd RSS ${first.rss.toFixed(0)} → ${last.rss.toFixed(0)} MiB; errors ${minutes.reduce((sum, m) => sum + m.errors, 0)}`);
  } finally {
    clearTimeout(hardStop);
    stopAll();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`soak failed: ${err?.stack ?? err}`);
  process.exit(1);
});
