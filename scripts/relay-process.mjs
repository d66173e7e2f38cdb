// Starts a local relay: applies the D1 migrations to a local state folder, then runs
// `wrangler dev` in development mode on loopback. Used by `npm start` and by the tests
// that drive the real CLI and real Chromium, so both run the relay the same way.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";

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

export function applyMigrations(persistTo, { stdio = "inherit" } = {}) {
  const result = spawnSync(process.execPath, [wrangler, "d1", "migrations", "apply", "relay", "--local", "--persist-to", persistTo], {
    cwd: root, env: quietEnv, stdio: ["ignore", stdio, stdio],
  });
  if (result.status !== 0) throw new Error(`applying D1 migrations failed (exit ${result.status})`);
}

/**
 * Spawns `wrangler dev` in its own process group and resolves once the relay answers.
 * Returns { url, port, stop }.
 */
export async function startRelay({ port, persistTo, vars = {}, stdio = "pipe", timeoutMs = 60_000, inspectorPort = 0 } = {}) {
  port ??= await freePort();
  persistTo ??= path.join(root, ".wrangler", "state");
  applyMigrations(persistTo, { stdio: stdio === "inherit" ? "inherit" : "ignore" });
  const varArgs = Object.entries(developmentVars(port, vars)).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const child = spawn(process.execPath, [
    wrangler, "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo, "--show-interactive-dev-session=false", "--test-scheduled", ...varArgs,
  ], { cwd: root, env: quietEnv, stdio: ["ignore", stdio, stdio], detached: true });

  let output = "";
  if (stdio === "pipe") {
    child.stdout.on("data", (d) => { output += d; });
    child.stderr.on("data", (d) => { output += d; });
  }
  const url = `http://localhost:${port}`;
  const stop = () => {
    try { process.kill(-child.pid, "SIGTERM"); } catch { /* already gone */ }
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/auth/status`);
      if (res.ok) return { url, port, stop, child, output: () => output };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  stop();
  throw new Error(`the relay did not answer within ${timeoutMs} ms:\n${output}`);
}
