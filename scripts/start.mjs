// `npm start`: the relay on http://localhost:8787 (PORT overrides; RELAY_STATE_DIR moves
// its local data) in development mode —
// local D1 migrated first, mail captured at /__dev/mail, no account or network needed.
// Settings from wrangler.toml's [vars] that are set in this environment are handed to the
// relay (CONTRACT §3). This process owns what it starts: wrangler and its runtime share
// its process group, a stop signal reaches them, and when the runtime dies or stops
// answering this process says so and exits non-zero instead of leaving a dead relay.
import { settingsFromEnvironment, startRelay, watchRelay } from "./relay-process.mjs";

const port = Number(process.env.PORT ?? 8787);
// Where the local D1, Durable Objects and R2 keep their data (default .wrangler/state).
const persistTo = process.env.RELAY_STATE_DIR || undefined;
const settings = settingsFromEnvironment(process.env);
const relay = await startRelay({ port, persistTo, vars: settings, stdio: "inherit", timeoutMs: 120_000, ownGroup: false });
console.log(`\nThe relay is up at ${relay.url}`);
console.log(`  console:     ${relay.url}/`);
console.log(`  dev mail:    ${relay.url}/__dev/mail`);
console.log(`  API docs:    ${relay.url}/v1/openapi.json`);
console.log(`  first agent: ./bin/service agent register --url ${relay.url}`);
const named = Object.entries(settings).map(([name, value]) => `${name}=${value}`);
if (named.length > 0) console.log(`  settings:    ${named.join(" ")}`);
console.log("");

let stopping = false;
/** Stops wrangler (which stops its runtime) and exits once it has gone, forcing it after a while. */
function shutDown(signal, exitCode) {
  if (stopping) return;
  stopping = true;
  stopWatching();
  relay.stop(signal);
  setTimeout(() => { relay.stop("SIGKILL"); process.exit(exitCode); }, 5_000).unref();
  relay.child.once("exit", () => process.exit(exitCode));
  if (relay.child.exitCode !== null || relay.child.signalCode !== null) process.exit(exitCode);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => shutDown(signal, 0));
}
relay.child.on("exit", (code, signal) => {
  if (stopping) return;
  stopping = true;
  console.error(`\nThe relay stopped: wrangler dev exited (${signal ?? `code ${code}`}). Run npm start again.`);
  process.exit(code || 1);
});
const stopWatching = watchRelay(port, (silentMs) => {
  console.error(`\nThe relay stopped answering (nothing for ${Math.round(silentMs / 1000)} s): its runtime has died. Stopping wrangler; run npm start again.`);
  shutDown("SIGTERM", 1);
});
