// A CPU profile of the relay's Worker isolate (the Worker and its Durable Objects run in
// one isolate under `wrangler dev`), taken over the inspector wrangler opens on loopback.
// `npm run bench` uses it when BENCH_PROFILE names a file: the profile is written there (open
// it in any Chrome DevTools-compatible viewer) and the functions with the most self time
// are printed, so a regression in the hot path can be found without guessing.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

/** Connects to the inspector at `port` and returns a `send(method, params)` for CDP calls. */
async function connect(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on 127.0.0.1:${port}`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
  let next = 1;
  const pending = new Map();
  ws.on("message", (raw) => {
    const msg = JSON.parse(String(raw));
    const waiter = msg.id && pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(`${msg.error.message}`));
    else waiter.resolve(msg.result);
  });
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
  return { send, close: () => ws.close() };
}

/** Self time per function (name and location), largest first. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const ticks = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const dt = profile.timeDeltas[i] ?? 0;
    const f = node.callFrame;
    const file = f.url ? f.url.split("/").slice(-2).join("/") : "";
    const key = `${f.functionName || "(anonymous)"} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`;
    ticks.set(key, (ticks.get(key) ?? 0) + dt);
  }
  const total = [...ticks.values()].reduce((a, b) => a + b, 0);
  return { total, top: [...ticks.entries()].sort((a, b) => b[1] - a[1]) };
}

/** Runs `work` with the profiler on; writes the profile to `file` and prints the top `count` functions by self time. */
export async function profiled(inspectorPort, file, work, count = 25) {
  const inspector = await connect(inspectorPort);
  try {
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 200 });
    await inspector.send("Profiler.start");
    await work();
    const { profile } = await inspector.send("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    const { total, top } = selfTimes(profile);
    console.log(`  CPU profile of the relay's isolate written to ${file}; top ${count} by self time:`);
    for (const [name, us] of top.slice(0, count)) console.log(`    ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
  } finally {
    inspector.close();
  }
}
