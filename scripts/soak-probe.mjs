// Measuring a soak (scripts/soak.mjs) besides latency: the resident memory of the local
// runtime's processes (split into anonymous and file-backed memory, per process, so growth
// can be placed: `wrangler dev` runs two workerd processes, its own dev proxy, which every
// request and socket passes through, and the runtime serving the Worker), the JS heap of
// the Worker's isolate through the runtime's inspector, and the size of the local files.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import WebSocket from "ws";

/** The workerd processes under the relay's process, oldest first. */
export function workerdPids(rootPid) {
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
  return [...names].filter(([pid, name]) => name === "workerd" && under(pid)).map(([pid]) => pid).sort((a, b) => a - b);
}

/**
 * Resident memory (MiB) of the workerd processes under the relay's process: the total,
 * and per process its anonymous part (heaps: V8's and the runtime's own) and its
 * file-backed part (mapped files, such as SQLite's), so growth can be placed.
 */
export function workerdRss(rootPid) {
  const processes = [];
  for (const pid of workerdPids(rootPid)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      processes.push({ pid, rss: kib("VmRSS") / 1024, anon: kib("RssAnon") / 1024, file: kib("RssFile") / 1024 });
    } catch { /* gone */ }
  }
  return { total: processes.reduce((sum, p) => sum + p.rss, 0), processes };
}
export const rssText = ({ total, processes }) =>
  `workerd RSS ${total.toFixed(0)} MiB (${processes.map((p) => `${p.rss.toFixed(0)}: anon ${p.anon.toFixed(0)} file ${p.file.toFixed(0)}`).join("; ")})`;

/**
 * The relay isolate's JavaScript heap (used and allocated, MiB) through the local runtime's
 * inspector (`SOAK_INSPECT=1`): tells the Worker's and the store's objects apart from the
 * runtime's own memory (SQLite, sockets, buffers). Null when the inspector does not answer.
 */
export async function openInspector(inspectorPort) {
  const ws = new WebSocket(`ws://127.0.0.1:${inspectorPort}/ws`, { headers: { host: `localhost:${inspectorPort}` } });
  await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
  let nextId = 1;
  const pending = new Map();
  ws.on("message", (raw) => {
    const message = JSON.parse(String(raw));
    if (message.id && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  });
  const call = (method, params = {}) => new Promise((resolve) => {
    const id = nextId++;
    const timer = setTimeout(() => { pending.delete(id); resolve(null); }, 30_000);
    pending.set(id, (message) => { clearTimeout(timer); resolve(message.result ?? null); });
    ws.send(JSON.stringify({ id, method, params }));
  });
  return {
    /**
     * `used` as V8 reports it: what is referenced plus garbage not yet collected, so an upper
     * bound on the live heap (a leak shows as a rise that does not come back); `total` is
     * what V8 holds. No collection is forced first: through wrangler's inspector proxy
     * `HeapProfiler.collectGarbage` is never answered (and `HeapProfiler.enable` stalls).
     */
    async heap() {
      const usage = await call("Runtime.getHeapUsage");
      return usage ? { used: usage.usedSize / 2 ** 20, total: usage.totalSize / 2 ** 20 } : null;
    },
    close: () => ws.terminate(),
  };
}

/** Sizes (MiB) of the relay's local storage files (Durable Object and D1 SQLite databases, R2). */
export function storageMiB(persistTo) {
  let bytes = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else try { bytes += statSync(full).size; } catch { /* gone */ }
    }
  };
  try { walk(persistTo); } catch { /* gone */ }
  return bytes / 2 ** 20;
}
