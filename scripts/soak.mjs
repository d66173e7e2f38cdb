// Soak (issue 16, Faults; not a CI test): starts a relay of its own on loopback and drives
// mixed traffic at it for SOAK_MINUTES (default 10) — row creates and deletes (the live
// set stays near WINDOW rows), list and single-row reads, feed sockets on the app origin,
// feed long-polls and a redeploy every DEPLOY_EVERY_S seconds — then stops by itself.
// Every minute it prints each kind's count, p50 and p99 latency, errors, socket frames,
// long-poll returns and the resident memory of the relay's workerd processes, so whether
// latency and memory stay flat from the first minute to the last can be read off; the
// last line sets the final minute beside the first. docs/performance.md, "Soak".
// The relay runs from a copy of the last commit (soak-snapshot.mjs); memory is split per
// runtime process and, with SOAK_INSPECT=1, the isolate's JS heap is read too
// (soak-probe.mjs); SOAK_TARGET=baseline drives the bare baseline Worker the same way,
// for the runtime's own share (soak-targets.mjs).
//
//   SOAK_MINUTES=3 SOAK_INSPECT=1 node scripts/soak.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { freePort } from "./relay-process.mjs";
import { openInspector, rssText, storageMiB, workerdRss } from "./soak-probe.mjs";
import { exitCodeInSnapshot } from "./soak-snapshot.mjs";
import { baselineTarget, loopbackLookup, relayTarget } from "./soak-targets.mjs";

const snapshotExit = await exitCodeInSnapshot(import.meta.url);
if (snapshotExit !== null) process.exit(snapshotExit);

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
/** `SOAK_INSPECT=1`: also read the relay isolate's JS heap each minute through the runtime's inspector. */
const INSPECT = process.env.SOAK_INSPECT === "1";
/** Live rows kept: each create past this many deletes the oldest. */
const WINDOW = 1000;
const TARGETS = { relay: relayTarget, baseline: baselineTarget };
const target = TARGETS[process.env.SOAK_TARGET?.trim() || "relay"];
if (!target) throw new Error(`SOAK_TARGET must be one of ${Object.keys(TARGETS).join(", ")}`);

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

const ms = (v) => (Number.isFinite(v) ? v.toFixed(0).padStart(5) : "  n/a");
/** What the relay is measured by besides latency: its processes, the isolate's heap (when inspected) and its files. */
let probe = { rootPid: 0, persistTo: "", inspector: null };
async function closeMinute(index) {
  const b = bucket;
  bucket = freshBucket();
  const heap = probe.inspector ? await probe.inspector.heap() : null;
  const row = { minute: index, rss: workerdRss(probe.rootPid), heap, storage: storageMiB(probe.persistTo), ...b };
  minutes.push(row);
  const part = (kind) => `${kind} ${String(b.latencies[kind].length).padStart(5)} p50 ${ms(percentile(b.latencies[kind], 50))} p99 ${ms(percentile(b.latencies[kind], 99))}`;
  const heapText = heap ? ` | JS heap ${heap.used.toFixed(0)}/${heap.total.toFixed(0)} MiB` : "";
  console.log(`min ${String(index).padStart(2)} | ${part("write")} | ${part("read")} | ${part("deploy")} | long-polls ${b.longPolls} | frames ${b.frames} | errors ${b.errors} | ${rssText(row.rss)}${heapText} | files ${row.storage.toFixed(0)} MiB`);
}

// ---- traffic ----
async function main() {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-soak-"));
  const port = await freePort();
  const inspectorPort = INSPECT ? await freePort() : 0;
  const server = await target.start({ port, persistTo, inspectorPort });
  let stopping = false;
  const stopAll = () => {
    stopping = true;
    server.stop();
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
    const ctx = await target.setUp(port);
    console.log(`soak: ${target.name} on ${port} (pid ${server.pid}${ctx.slug ? `, app ${ctx.slug}` : ""}); ${MINUTES} min, ${WRITERS} writers, ${READERS} readers, ${SOCKETS} sockets, ${target.longPoll ? LONG_POLLS : 0} long-polls, ${target.deploy ? `a redeploy every ${DEPLOY_EVERY_S} s` : "no redeploys"}`);
    probe = { rootPid: server.pid, persistTo, inspector: INSPECT ? await openInspector(inspectorPort).catch((err) => { console.error(`soak: no inspector (${err.message})`); return null; }) : null };
    const before = probe.inspector ? await probe.inspector.heap() : null;
    console.log(`min  0 | ${rssText(workerdRss(server.pid))} before traffic${before ? ` | JS heap ${before.used.toFixed(0)}/${before.total.toFixed(0)} MiB` : ""}`);
    const endAt = Date.now() + MINUTES * 60_000;
    const going = () => !stopping && Date.now() < endAt;
    let created = 0;

    const writer = async () => {
      while (going()) {
        const n = created++;
        await timed("write", () => target.create(ctx, n));
        if (target.remove && n >= WINDOW) await timed("write", () => target.remove(ctx, n - WINDOW));
      }
    };
    const reader = async () => {
      while (going()) {
        await timed("read", () => target.list(ctx));
        await timed("read", () => target.one(ctx, Math.max(0, created - 10)));
      }
    };
    const longPoll = async () => {
      let cursor = 0;
      while (going()) {
        try {
          const res = await target.longPoll(ctx, cursor);
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
        await timed("deploy", () => target.deploy(ctx, version));
      }
    };
    const sockets = [];
    const openSocket = () => {
      const { url, protocols } = target.socket(ctx);
      const ws = new WebSocket(url, protocols, { lookup: loopbackLookup });
      let cursor = 0;
      ws.on("message", (raw) => {
        const frame = JSON.parse(String(raw));
        if (frame.type === "hello") ws.send(JSON.stringify({ type: "sub", since: cursor }));
        if (frame.type === "batch" || frame.type === "entry") bucket.frames += 1;
        if (typeof frame.cursor === "number") cursor = frame.cursor;
        if (frame.entry?.seq) cursor = Math.max(cursor, frame.entry.seq);
      });
      ws.on("error", () => { bucket.errors += 1; });
      // A socket the server closed (a redeploy may ask watchers to reconnect) is opened again.
      ws.on("close", () => { if (going()) setTimeout(openSocket, 500); });
      sockets.push(ws);
    };
    for (let i = 0; i < SOCKETS; i++) openSocket();

    let minute = 0;
    let closing = Promise.resolve();
    const ticker = setInterval(() => { closing = closeMinute(++minute); }, 60_000);
    await Promise.all([
      ...Array.from({ length: WRITERS }, writer), ...Array.from({ length: READERS }, reader),
      ...(target.longPoll ? Array.from({ length: LONG_POLLS }, longPoll) : []), ...(target.deploy ? [deployer()] : []),
    ]);
    clearInterval(ticker);
    await closing;
    if (minutes.length < Math.max(1, Math.floor(MINUTES))) await closeMinute(++minute);
    probe.inspector?.close();
    for (const ws of sockets) ws.terminate();

    const first = minutes[0];
    const last = minutes[minutes.length - 1];
    const ratio = (kind, p) => (percentile(last.latencies[kind], p) / percentile(first.latencies[kind], p)).toFixed(2);
    console.log(`soak: ${created} creates; last minute against the first: write p50 ×${ratio("write", 50)} p99 ×${ratio("write", 99)}, read p50 ×${ratio("read", 50)} p99 ×${ratio("read", 99)}; workerd RSS ${first.rss.total.toFixed(0)} → ${last.rss.total.toFixed(0)} MiB; errors ${minutes.reduce((sum, m) => sum + m.errors, 0)}`);
  } finally {
    clearTimeout(hardStop);
    stopAll();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`soak failed: ${err?.stack ?? err}`);
  process.exit(1);
});
