// What a soak (scripts/soak.mjs) drives: the relay (`SOAK_TARGET=relay`, the default) or
// the bare baseline Worker of the benchmarks (`SOAK_TARGET=baseline`, bench/baseline/),
// under the same `wrangler dev` and the same local runtime, so the memory the runtime
// itself gains under a stream of writes, reads and sockets can be set beside the relay's.
// Each target starts its process and says how to write, read, watch, long-poll and
// redeploy; the baseline has no long-poll and no deploys (its `longPoll` and `deploy` are null).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { startRelay } from "./relay-process.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const LOOPBACK = "127.0.0.1";

// ---- the client: fetch (keep-alive) on loopback ----
export async function send(port, method, pathName, { headers = {}, json } = {}) {
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
/** A socket's host resolved to loopback whatever its name (`<slug>.localhost`). */
export const loopbackLookup = (_host, options, callback) => (options?.all ? callback(null, [{ address: LOOPBACK, family: 4 }]) : callback(null, LOOPBACK, 4));

const manifest = {
  $defs: { Item: { type: "object", properties: { n: { type: "integer" }, text: { type: "string", maxLength: 200 } }, required: ["n"] } },
  "x-service-manifest": {
    app: { name: "Soak" },
    collections: { items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

/** A claimed agent through the development outbox, and one app. */
async function relaySetUp(port) {
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
  return { port, auth, appId: app.app_id, slug: app.slug, rowsPath: `/v1/apps/${app.app_id}/collections/items` };
}

/** The relay: creates and deletes of one app's rows, its list and rows, its feed sockets and long-polls, redeploys. */
export const relayTarget = {
  name: "relay",
  async start({ port, persistTo, inspectorPort }) {
    const relay = await startRelay({
      port, persistTo, stdio: "pipe", browser: false, inspectorPort,
      vars: { MAX_ROWS_PER_APP: "10000000", MAX_STORAGE_BYTES_PER_APP: "10000000000" },
    });
    return { pid: relay.child.pid, stop: () => relay.stop() };
  },
  setUp: relaySetUp,
  create: (ctx, n) => send(ctx.port, "POST", ctx.rowsPath, { headers: ctx.auth, json: { key: `w-${n}`, data: { n, text: `row ${n}` } } }),
  remove: (ctx, n) => send(ctx.port, "DELETE", `${ctx.rowsPath}/w-${n}`, { headers: ctx.auth }),
  list: (ctx) => send(ctx.port, "GET", `${ctx.rowsPath}?limit=50`, { headers: ctx.auth }),
  /** A row read; one deleted meanwhile (404) counts as answered. */
  one: (ctx, n) => send(ctx.port, "GET", `${ctx.rowsPath}/w-${n}`, { headers: ctx.auth }).then((res) => (res.status === 404 ? { status: 200 } : res)),
  socket: (ctx) => ({
    url: `ws://${ctx.slug}.localhost:${ctx.port}/_svc/ws`,
    protocols: ["service.v1", `service.agentkey.${ctx.auth.authorization.slice(7)}`],
  }),
  longPoll: (ctx, cursor) => send(ctx.port, "GET", `/v1/apps/${ctx.appId}/feed?since=${cursor}&limit=500&wait=20`, { headers: ctx.auth }),
  deploy: (ctx, version) => send(ctx.port, "POST", `/v1/apps/${ctx.appId}/versions`, { headers: ctx.auth, json: { html: `<p>soak ${version}</p>` } }),
};

/** The bare baseline: inserts (each sent to every socket as one frame), reads of the newest rows; it keeps every row. */
export const baselineTarget = {
  name: "baseline",
  async start({ port, persistTo, inspectorPort }) {
    const child = spawn(process.execPath, [
      path.join(root, "node_modules", "wrangler", "bin", "wrangler.js"), "dev", "--config", path.join(root, "bench", "baseline", "wrangler.toml"),
      "--ip", LOOPBACK, "--port", String(port), "--inspector-port", String(inspectorPort), "--persist-to", persistTo,
      "--show-interactive-dev-session=false", "--var", `HOOK_TARGET:http://${LOOPBACK}:9/none`,
    ], { cwd: root, env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" }, stdio: "ignore", detached: true });
    const stop = () => { try { process.kill(-child.pid, "SIGTERM"); } catch { /* gone */ } };
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the baseline's wrangler dev exited early (${child.exitCode})`);
      if (await send(port, "GET", "/health").then((res) => res.status === 200, () => false)) return { pid: child.pid, stop };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    stop();
    throw new Error("the baseline did not answer within 90 s");
  },
  setUp: async (port) => ({ port }),
  create: (ctx, n) => send(ctx.port, "POST", "/rows", { json: { n, text: `row ${n}` } }),
  remove: null,
  list: (ctx) => send(ctx.port, "GET", "/rows?limit=50"),
  one: (ctx) => send(ctx.port, "GET", "/rows?limit=1"),
  socket: (ctx) => ({ url: `ws://localhost:${ctx.port}/ws`, protocols: [] }),
  longPoll: null,
  deploy: null,
};
