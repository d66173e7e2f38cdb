// Builds the `service` CLI (src/cli/main.ts and everything it imports, `ws` included) into
// one ES module, dist/cli/service.mjs, that bin/service imports: Node then loads plain
// JavaScript instead of compiling TypeScript through tsx on every run. Beside it,
// dist/cli/service.inputs.json lists the files the bundle was built from and when.
//
// dist/ is git-ignored: `npm install` / `npm ci` build it (the `prepare` script), and
// bin/service rebuilds it on the fly when it is missing or any input changed after the
// build (an mtime check of the listed inputs, about a millisecond), so an edit to src/cli
// shows up on the next run as it did with tsx. test/docs/cli-bundle-fresh.test.ts fails
// when the bundle on disk differs from a fresh build.
//
//   node scripts/build-cli.mjs              build (npm run build:cli)
//   node scripts/build-cli.mjs --optional   build, or say why not and exit 0 (prepare: an
//                                           install without devDependencies has no esbuild;
//                                           bin/service then runs src/cli through tsx)
//
// This module imports esbuild only when it builds, so bin/service can import it for the
// staleness check at no cost.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const self = fileURLToPath(import.meta.url);
export const ENTRY = path.join(root, "src", "cli", "main.ts");
// Same depth under the root as src/cli/, so src/cli/version.ts's
// `new URL("../../package.json", import.meta.url)` finds package.json from the bundle too.
export const OUTPUT = path.join(root, "dist", "cli", "service.mjs");
export const INPUTS = path.join(root, "dist", "cli", "service.inputs.json");

// `ws` is CommonJS and requires Node's built-ins; an ES module has no `require`, so the
// bundle makes one (esbuild's own shim would throw "Dynamic require of ... is not supported").
const BANNER = [
  "// Built by scripts/build-cli.mjs from src/cli/. Do not edit: bin/service rebuilds it when a source changes.",
  'import { createRequire as __serviceCreateRequire } from "node:module";',
  "const require = __serviceCreateRequire(import.meta.url);",
].join("\n");

/** Bundles the CLI in memory: { code, inputs } (inputs relative to the root, sorted). */
export async function renderCliBundle() {
  const { build } = await import("esbuild");
  const result = await build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    outfile: OUTPUT,
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    target: "node20",
    banner: { js: BANNER },
    legalComments: "none",
    logLevel: "silent",
  });
  const code = result.outputFiles.find((f) => f.path.endsWith(".mjs")).text;
  const inputs = Object.keys(result.metafile.inputs).map((p) => p.split(path.sep).join("/")).sort();
  return { code, inputs };
}

/** Builds the bundle and its inputs list into `output` / `inputsFile` (atomically each). */
export async function buildCli({ output = OUTPUT, inputsFile = INPUTS } = {}) {
  // Inputs changed from here on are newer than `builtFrom`, so the next run rebuilds.
  const builtFrom = Date.now();
  const { code, inputs } = await renderCliBundle();
  mkdirSync(path.dirname(output), { recursive: true });
  writeAtomically(output, code);
  // The build script itself is an input: changing how the bundle is made remakes it.
  const listed = [...inputs, path.relative(root, self).split(path.sep).join("/")];
  writeAtomically(inputsFile, JSON.stringify({ builtFrom, inputs: listed }, null, 1) + "\n");
  return { output, inputs: listed };
}

function writeAtomically(file, text) {
  // Several `service` processes may rebuild at once; each renames a whole file into place.
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * Why the bundle must be (re)built, or null when it is up to date: missing, or an input
 * (as listed at the last build) is gone or was modified after the build started.
 */
export function staleReason({ output = OUTPUT, inputsFile = INPUTS, base = root } = {}) {
  try {
    statSync(output);
  } catch {
    return `${path.relative(base, output)} is missing`;
  }
  let listed;
  try {
    listed = JSON.parse(readFileSync(inputsFile, "utf8"));
  } catch {
    listed = null;
  }
  if (!Number.isFinite(listed?.builtFrom) || !Array.isArray(listed?.inputs)) return `${path.relative(base, inputsFile)} is missing or unreadable`;
  for (const input of listed.inputs) {
    let mtime;
    try {
      mtime = statSync(path.join(base, input)).mtimeMs;
    } catch {
      return `${input} is gone`;
    }
    if (mtime > listed.builtFrom) return `${input} changed`;
  }
  return null;
}

/** Builds the bundle when staleReason() says so; returns the reason it was built, or null. */
export async function ensureCliBundle(options) {
  const reason = staleReason(options);
  if (reason) await buildCli(options);
  return reason;
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  const optional = process.argv.includes("--optional");
  try {
    const { output, inputs } = await buildCli();
    console.log(`built ${path.relative(root, output)} from ${inputs.length} files`);
  } catch (err) {
    if (!optional) throw err;
    const why = err?.code === "ERR_MODULE_NOT_FOUND" ? "esbuild is not installed" : String(err?.message ?? err).split("\n")[0];
    console.warn(`did not build ${path.relative(root, OUTPUT)} (${why}); bin/service will run src/cli through tsx`);
  }
}
