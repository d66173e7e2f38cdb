// A soak (scripts/soak.mjs) runs the relay from a copy of the last commit, not from the
// working tree: `wrangler dev` rebuilds its bundle and restarts the runtime whenever a file
// it bundles changes, so in a working tree others are editing, a soak would restart
// mid-run (a pause of seconds, sockets silently cut off by the restart, and memory
// counted across two runtimes) and would measure half-made code. The copy is
// `git archive HEAD` with node_modules linked in and the soak's own scripts as they are
// now; it is removed when the soak ends. `SOAK_WORKTREE=1` runs the working tree instead.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs the script at `scriptUrl` again inside a fresh copy of HEAD and answers its exit
 * code; answers null when this process is already that copy (or SOAK_WORKTREE=1 asks for
 * the working tree), and the caller goes on.
 */
export async function exitCodeInSnapshot(scriptUrl) {
  if (process.env.SOAK_WORKTREE === "1" || process.env.SOAK_IN_SNAPSHOT === "1") return null;
  const script = fileURLToPath(scriptUrl);
  const scripts = path.dirname(script);
  const root = path.dirname(scripts);
  const tree = mkdtempSync(path.join(tmpdir(), "relay-soak-tree-"));
  const removeTree = () => rmSync(tree, { recursive: true, force: true });
  const archived = spawnSync("sh", ["-c", 'git -C "$1" archive HEAD | tar -x -C "$2"', "sh", root, tree], { stdio: "inherit" });
  if (archived.status !== 0) {
    removeTree();
    throw new Error(`copying HEAD failed (exit ${archived.status})`);
  }
  symlinkSync(path.join(root, "node_modules"), path.join(tree, "node_modules"), "dir");
  for (const name of readdirSync(scripts).filter((file) => /^soak.*\.mjs$/.test(file))) {
    copyFileSync(path.join(scripts, name), path.join(tree, "scripts", name));
  }
  console.log(`soak: running the relay from a copy of HEAD (${spawnSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim()})`);
  const child = spawn(process.execPath, [path.join(tree, "scripts", path.basename(script))], {
    env: { ...process.env, SOAK_IN_SNAPSHOT: "1" }, stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => child.on("exit", (exitCode) => resolve(exitCode ?? 1)));
  removeTree();
  return code;
}
