// `npm run bench` section (h): agent tasks, each beside a bare baseline in the same run.
//   - write → task offered on the wake socket: one write at a time to an app with an
//     agentTasks rule, timed from sending the POST to the `agent-task.available` frame on
//     the owner's wake socket. Two bare floors beside it: a write to the baseline Durable
//     Object that sends a frame to a socket (write → socket, no queue), and the baseline's
//     Worker → Queue → consumer → loopback POST (the queue hop the relay's path also takes).
//   - claim → ack round trip with 1 and 10 concurrent workers: tasks queued beforehand,
//     each worker claiming one task (`max: 1`) and acking it until the queue is empty; per
//     task the time from sending the claim to the ack's answer. Beside it, the same
//     workers making two bare Worker → DO RPC inserts on the baseline per "task".
// Printed, never asserted. The helpers (HTTP client, table, percentiles, the baseline
// socket) are bench.mjs's own, handed in.
import WebSocket from "ws";

const ruleManifest = (base) => ({
  ...base,
  "x-service-manifest": {
    ...base["x-service-manifest"],
    agentTasks: [{ on: "create", collection: "pings", taskType: "bench", prompt: "Nothing: the bench acks at once.", writes: ["docs"] }],
  },
});

/** The owner's wake socket; `onAvailable(appId, at)` per hint. Resolves once `hello` arrived. */
function openWakeSocket(relay, key, onAvailable) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://localhost:${relay.port}/v1/agent-tasks/stream`, ["service.v1", `service.agentkey.${key}`], {
      handshakeTimeout: 30_000, perMessageDeflate: false,
    });
    const timer = setTimeout(() => { ws.terminate(); reject(new Error("the wake socket sent no hello within 30 s")); }, 30_000);
    ws.on("message", (raw) => {
      const at = performance.now();
      const frame = JSON.parse(String(raw));
      if (frame.type === "hello") { clearTimeout(timer); resolve(ws); }
      if (frame.type === "agent-task.available") onAvailable(frame.app_id, at);
    });
    ws.on("error", (err) => { clearTimeout(timer); reject(err); });
    ws.on("close", (code) => { if (!ws.closedByBench) console.log(`  the wake socket closed during the run (${code}): hints after it are lost (did wrangler dev reload?)`); });
  });
}

export async function benchTasks(h, relay, app, baseline, receiver, { writes, tasks }) {
  console.log(`\n(h) agent tasks: write → task offered on the wake socket (${writes} writes, one at a time), claim → ack with 1 and 10 workers (${tasks} tasks each)`);
  const deployed = h.expectStatus(await h.request({ port: relay.port, method: "POST", path: "/v1/apps", headers: app.auth, json: { html: "<p>tasks</p>", manifest: ruleManifest(h.manifest) } }), 201, "deploy with agentTasks").json();
  const create = async (title) => h.expectStatus(await h.request({ port: relay.port, method: "POST", path: `/v1/apps/${deployed.app_id}/collections/pings`, headers: app.auth, json: { data: { title, n: 1 } } }), 201, "create");

  // --- write → offered
  let hint = null;
  let hints = 0;
  const socket = await openWakeSocket(relay, app.key, (appId, at) => {
    if (appId !== deployed.app_id) return;
    hints += 1;
    hint?.(at);
  });
  const offered = [];
  for (let i = 0; i < writes; i++) {
    const arrived = new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 15_000);
      hint = (at) => { clearTimeout(timer); resolve(at); };
    });
    const sent = performance.now();
    await create(`offer-${i}`);
    const at = await arrived;
    if (at !== null) offered.push(at - sent);
  }
  hint = null;
  socket.closedByBench = true;
  if (offered.length < writes) console.log(`  ${writes - offered.length} hint(s) did not arrive within 15 s of their write; ${hints} hint frame(s) arrived in all`);
  socket.close();
  const bareSocket = [];
  const bareWs = await h.openBareWatcher(baseline, (entries, at) => h.onBare?.(entries, at));
  for (let i = 0; i < writes; i++) {
    const arrived = new Promise((resolve) => { h.onBare = (_entries, at) => resolve(at); });
    const sent = performance.now();
    h.expectStatus(await h.request({ port: baseline.port, method: "POST", path: "/rows", json: { title: "ping", n: i } }), 201, "bare write");
    bareSocket.push((await arrived) - sent);
  }
  h.onBare = null;
  bareWs.close();
  const bareQueue = await h.measureDeliveries({
    writes, concurrency: 1, prefix: `tasks-bare-${Date.now()}`, receiver,
    send: async (mark) => h.expectStatus(await h.request({ port: baseline.port, method: "POST", path: "/hooked", json: { title: mark } }), 202, "enqueue"),
  });
  h.table([
    ["path", "samples", "p50", "p99"],
    ["relay: write → agent-task.available", `${offered.length}/${writes}`, h.ms(h.percentile(offered, 50)), h.ms(h.percentile(offered, 99))],
    ["bare: write → DO → socket frame", bareSocket.length, h.ms(h.percentile(bareSocket, 50)), h.ms(h.percentile(bareSocket, 99))],
    ["bare: Worker → Queue → consumer → POST", bareQueue.latencies.length, h.ms(h.percentile(bareQueue.latencies, 50)), h.ms(h.percentile(bareQueue.latencies, 99))],
  ]);
  console.log("  the relay's path is write → outbox (handed to the queue on commit) → queue → consumer → D1 task → the owner's TaskWake object → socket");

  // --- claim → ack
  const rows = [["workers", "relay p50", "relay p99", "relay tasks/s", "bare 2×RPC p50", "bare 2×RPC p99", "bare /s"]];
  for (const workers of [1, 10]) {
    await drain(h, relay, app, deployed.app_id);
    for (let start = 0; start < tasks; start += 100) {
      const batch = Array.from({ length: Math.min(100, tasks - start) }, (_, i) => ({ data: { title: `task-${workers}-${start + i}`, n: 1 } }));
      h.expectStatus(await h.request({ port: relay.port, method: "POST", path: `/v1/apps/${deployed.app_id}/collections/pings/batch`, headers: app.auth, json: { rows: batch, emitEffects: true } }), 200, "batch create");
    }
    await waitQueued(h, relay, app, deployed.app_id, tasks);
    const trips = [];
    const relayMs = await h.drive(tasks, workers, async () => {
      const sent = performance.now();
      const claimed = h.expectStatus(await h.request({ port: relay.port, method: "POST", path: "/v1/agent-tasks/claim", headers: app.auth, json: { max: 1, app_ids: [deployed.app_id] } }), 200, "claim").json().tasks;
      if (!claimed.length) return;
      h.expectStatus(await h.request({ port: relay.port, method: "POST", path: `/v1/agent-tasks/${claimed[0].task_id}/ack`, headers: app.auth, json: { report: "ok" } }), 200, "ack");
      trips.push(performance.now() - sent);
    });
    const bare = [];
    const bareMs = await h.drive(tasks, workers, async (i) => {
      const sent = performance.now();
      h.expectStatus(await h.request({ port: baseline.port, method: "POST", path: "/rows/rpc", json: { title: "claim", n: i } }), 201, "bare rpc");
      h.expectStatus(await h.request({ port: baseline.port, method: "POST", path: "/rows/rpc", json: { title: "ack", n: i } }), 201, "bare rpc");
      bare.push(performance.now() - sent);
    });
    rows.push([workers, h.ms(h.percentile(trips, 50)), h.ms(h.percentile(trips, 99)), (trips.length / (relayMs / 1000)).toFixed(1),
      h.ms(h.percentile(bare, 50)), h.ms(h.percentile(bare, 99)), (bare.length / (bareMs / 1000)).toFixed(1)]);
  }
  h.table(rows);
  console.log("  a relay round trip is two requests (claim with a fresh credential, ack), each an agent-key lookup plus D1 statements; the bare one is two Worker → DO RPC inserts");
}

/** Acks whatever the app still has queued (earlier runs), so each run times only its own tasks. */
async function drain(h, relay, app, appId) {
  for (;;) {
    const claimed = h.expectStatus(await h.request({ port: relay.port, method: "POST", path: "/v1/agent-tasks/claim", headers: app.auth, json: { max: 100, app_ids: [appId] } }), 200, "claim").json().tasks;
    if (!claimed.length) return;
    for (const task of claimed) await h.request({ port: relay.port, method: "POST", path: `/v1/agent-tasks/${task.task_id}/ack`, headers: app.auth, json: {} });
  }
}

/** Waits until `count` tasks are queued (the consumer records them about a second after the writes). */
async function waitQueued(h, relay, app, appId, count) {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    let queued = 0;
    let before = "";
    for (;;) {
      const page = h.expectStatus(await h.request({ port: relay.port, path: `/v1/apps/${appId}/agent-tasks?status=queued&limit=100${before}`, headers: app.auth }), 200, "task list").json();
      queued += page.tasks.length;
      if (!page.next_before) break;
      before = `&before=${page.next_before}`;
    }
    if (queued >= count) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${count} tasks were not queued within 120 s`);
}
