// Starts a local relay: applies the D1 migrations to a local state folder, then runs
// `wrangler dev` in development mode on loopback. Used by `npm start` and by the tests
// that drive the real CLI and real Chromium, so both run the relay the same way.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { prepareLocalBrowser } from "./local-browser.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");

const quietEnv = {
  ...process.env,
  CI: "true",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  NO_UPDATE_NOTIFIER: "1",
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function developmentVars(port, extra = {}) {
  return {
    RELAY_ENV: "development",
    API_ORIGIN: `http://localhost:${port}`,
    APPS_DOMAIN: `localhost:${port}`,
    REGISTRATION_MODE: "open",
    ...extra,
  };
}

/**
 * The relay's settings as `wrangler.toml` names them under `[vars]`, commented-out ones
 * included (those whose default lives in src/config.ts, like the RATE_LIMIT_* buckets).
 */
export function settingNames() {
  const toml = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const vars = toml.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  return [...vars.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)\s*=/gm)].map((match) => match[1]);
}

/**
 * What `npm start` hands the relay from its own environment (CONTRACT §3): every setting
 * that is set there, e.g. `MAX_ROWS_PER_APP=100000 npm start`. RELAY_ENV is not one of
 * them: `npm start` is development mode by definition.
 */
export function settingsFromEnvironment(environment) {
  return Object.fromEntries(settingNames()
    .filter((name) => name !== "RELAY_ENV" && typeof environment[name] === "string" && environment[name] !== "")
    .map((name) => [name, environment[name]]));
}

export function applyMigrations(persistTo, { stdio = "inherit" } = {}) {
  const result = spawnSync(process.execPath, [wrangler, "d1", "migrations", "apply", "relay", "--local", "--persist-to", persistTo], {
    cwd: root, env: quietEnv, stdio: ["ignore", stdio, stdio],
  });
  if (result.status !== 0) throw new Error(`applying D1 migrations failed (exit ${result.status})`);
}

/**
 * The configuration `wrangler dev` runs with when the local browser binding is offered:
 * wrangler.toml plus `[browser] binding = "BROWSER"` (production leaves the binding to the
 * operator), written beside it so its relative paths still hold. Answers its path, or
 * null when wrangler.toml declares the binding itself.
 */
function configWithBrowser() {
  const toml = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  if (/^\[browser\]\s*$/m.test(toml)) return null;
  const target = path.join(root, "wrangler.local-browser.toml");
  const staging = `${target}.${process.pid}`;
  writeFileSync(staging, `# Generated from wrangler.toml by scripts/relay-process.mjs for local runs; do not edit.\n${toml}\n[browser]\nbinding = "BROWSER"\n`);
  renameSync(staging, target);
  return target;
}

/**
 * Spawns `wrangler dev` and resolves once the relay answers. Returns
 * { url, port, stop, child, output }.
 *
 * `ownGroup` (the default, for tests and benches) puts wrangler and the runtime it starts
 * in a process group of their own, so `stop()` ends them all at once. `npm start` passes
 * false: there they stay in the caller's group, so whatever stops that group (Ctrl-C, a
 * closed terminal, a harness killing it, even with SIGKILL) stops them too.
 *
 * `browser` (the default) offers the Browser Rendering binding when the machine has a
 * Chromium the local runtime can use offline (scripts/local-browser.mjs); without one the
 * relay runs without the binding and screenshots are brand cards.
 *
 * `minify: false` serves the Worker unminified, so a CPU profile names our functions.
 * `migrate: false` skips applying the D1 migrations (the caller has, and timed it apart).
 * `testScheduled: false` leaves out wrangler's `/__scheduled` route (a cron run on request),
 * whose wrapper otherwise parses every request's URL once more: the benchmark's bare Worker
 * has no such wrapper either.
 */
export async function startRelay({ port, persistTo, vars = {}, stdio = "pipe", timeoutMs = 60_000, inspectorPort = 0, ownGroup = true, browser = true, minify = true, migrate = true, testScheduled = true } = {}) {
  port ??= await freePort();
  persistTo ??= path.join(root, ".wrangler", "state");
  if (migrate) applyMigrations(persistTo, { stdio: stdio === "inherit" ? "inherit" : "ignore" });
  const varArgs = Object.entries(developmentVars(port, vars)).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const browserConfig = browser && prepareLocalBrowser() ? configWithBrowser() : null;
  const configArgs = browserConfig ? ["--config", browserConfig] : [];
  const child = spawn(process.execPath, [
    wrangler, "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo, "--show-interactive-dev-session=false", ...(testScheduled ? ["--test-scheduled"] : []), ...(minify ? [] : ["--minify=false"]), ...configArgs, ...varArgs,
  ], { cwd: root, env: quietEnv, stdio: ["ignore", stdio, stdio], detached: ownGroup });

  let output = "";
  if (stdio === "pipe") {
    child.stdout.on("data", (d) => { output += d; });
    child.stderr.on("data", (d) => { output += d; });
  }
  const url = `http://localhost:${port}`;
  const stop = (signal = "SIGTERM") => {
    try {
      if (ownGroup) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch { /* already gone */ }
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode}):\n${output}`);
    if (await answers(port, 5_000)) return { url, port, stop, child, output: () => output };
    await new Promise((r) => setTimeout(r, 200));
  }
  stop();
  throw new Error(`the relay did not answer within ${timeoutMs} ms:\n${output}`);
}

/** Whether the relay on `port` answers its status route (or `probePath`) within `timeoutMs`. */
export async function answers(port, timeoutMs, probePath = "/v1/auth/status") {
  return (await probeRelay(port, timeoutMs, probePath)) === "answered";
}

/** "answered", "refused" (nothing listens on the port) or "silent" (no answer in time). */
async function probeRelay(port, timeoutMs, probePath = "/v1/auth/status") {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${probePath}`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok ? "answered" : "silent";
  } catch (err) {
    return err?.cause?.code === "ECONNREFUSED" ? "refused" : "silent";
  }
}

/**
 * Probes a running relay every `everyMs` and calls `onDown` once it is gone: nothing has
 * listened on its port for `refusedForMs`, or nothing has answered for `silentForMs` (the
 * runtime under `wrangler dev` can die or hang while wrangler itself keeps running). A
 * slow answer under load still counts as an answer, and a reload after a source edit is
 * shorter than either window. Returns a function that stops probing.
 */
export function watchRelay(port, onDown, { everyMs = 1_000, refusedForMs = 6_000, silentForMs = 30_000, probeTimeoutMs = 15_000 } = {}) {
  let lastAnswer = Date.now();
  let firstRefusal = null;
  let stopped = false;
  let timer;
  const probe = async () => {
    const outcome = await probeRelay(port, probeTimeoutMs);
    if (stopped) return;
    const now = Date.now();
    if (outcome === "answered") lastAnswer = now;
    firstRefusal = outcome === "refused" ? (firstRefusal ?? now) : null;
    if (now - lastAnswer >= silentForMs || (firstRefusal !== null && now - firstRefusal >= refusedForMs)) {
      stopped = true;
      onDown(now - lastAnswer);
      return;
    }
    timer = setTimeout(probe, everyMs);
  };
  timer = setTimeout(probe, everyMs);
  return () => { stopped = true; clearTimeout(timer); };
}
