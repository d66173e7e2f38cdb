// `npm start`: the relay on http://localhost:8787 (PORT overrides) in development mode —
// local D1 migrated first, mail captured at /__dev/mail, no account or network needed.
import { startRelay } from "./relay-process.mjs";

const port = Number(process.env.PORT ?? 8787);
const relay = await startRelay({ port, stdio: "inherit", timeoutMs: 120_000 });
console.log(`\nThe relay is up at ${relay.url}`);
console.log(`  console:     ${relay.url}/`);
console.log(`  dev mail:    ${relay.url}/__dev/mail`);
console.log(`  API docs:    ${relay.url}/v1/openapi.json`);
console.log(`  first agent: ./bin/service agent register --url ${relay.url}\n`);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => { relay.stop(); process.exit(0); });
}
relay.child.on("exit", (code) => process.exit(code ?? 0));
