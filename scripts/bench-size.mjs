// Section (j) of `npm run bench`: the Worker's size and start. The bundle is what
// `wrangler deploy --dry-run` would upload (its main module gzipped, the figure the
// platform's limits count), for the relay and the bare baseline Worker; the start is the
// wall time from spawning `wrangler dev` to the first answered request, for both, taken
// while the benchmark started them (so it includes wrangler's own start, the same for both;
// the difference is the relay's bundle and first-request cost). The relay's D1 migrations
// are applied before its spawn and timed apart. The heap is the isolate's JS heap read
// through the runtime's inspector just after that first answer (no collection forced):
// what loading the Worker's modules leaves behind, which every isolate of it carries.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";

/** Gzipped KiB of the main module `wrangler deploy --dry-run` writes for `config`. */
function bundleKiB(root, wrangler, env, config) {
  const outdir = mkdtempSync(path.join(tmpdir(), "bench-bundle-"));
  try {
    const args = [wrangler, "deploy", "--dry-run", "--outdir", outdir, ...(config ? ["--config", config] : [])];
    const res = spawnSync(process.execPath, args, { cwd: root, env, encoding: "utf8", timeout: 180_000 });
    if (res.status !== 0) throw new Error(`wrangler deploy --dry-run failed: ${String(res.stderr).slice(0, 800)}`);
    const main = readdirSync(outdir).filter((name) => name.endsWith(".js")).map((name) => readFileSync(path.join(outdir, name)));
    return main.reduce((sum, bytes) => sum + gzipSync(bytes).length, 0) / 1024;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const heapText = (heap) => (heap ? `${heap.used.toFixed(1)} MiB (${heap.total.toFixed(1)} held)` : "n/a");

/** Prints (j); `starts` holds the seconds from spawn to first answer of each process, and each isolate's heap then. */
export function benchSize({ root, wrangler, env, table }, starts) {
  console.log("\n(j) size and start: the uploaded bundle (gzipped main module) and spawn → first answered request");
  const relay = bundleKiB(root, wrangler, env, null);
  const baseline = bundleKiB(root, wrangler, env, path.join(root, "bench", "baseline", "wrangler.toml"));
  table([
    ["Worker", "bundle (gzip)", "spawn → first answer", "isolate heap then", "goal"],
    ["relay", `${relay.toFixed(1)} KiB`, `${starts.relay.toFixed(1)} s`, heapText(starts.heap?.relay), `≤ 300 KiB: ${relay <= 300 ? "met" : "not met"}`],
    ["bare baseline", `${baseline.toFixed(1)} KiB`, `${starts.baseline.toFixed(1)} s`, heapText(starts.heap?.baseline), ""],
  ]);
  console.log(`  before its start the relay's D1 migrations were applied apart (a wrangler process of its own, not counted above): ${starts.migrations.toFixed(1)} s; the baseline has none`);
  console.log("  what is big, minified: the MCP server SDK, the OAuth provider library, zod's core, drizzle, file-type, hono (docs/performance.md)");
}
