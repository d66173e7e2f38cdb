// Lets `wrangler dev` run the relay's optional browser binding (BROWSER, used for real app
// screenshots) without the network. For a local `[browser]` binding the local runtime
// launches a pinned Chrome build from wrangler's global cache and would download it there
// on first use; it skips the download when an executable already sits at the cache path
// of that build. This script puts a small wrapper there that starts the system's Chromium
// instead. Idempotent; touches nothing but that cache folder; reaches no network.
// Exports `prepareLocalBrowser()` (answers true when the binding can be offered) and runs
// it when called directly.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The Chrome build the local runtime pins for the browser binding (kept in step with it). */
export const PINNED_BROWSER_BUILD = "126.0.6478.182";

/** Where the system's Chromium lives when the machine has one. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** The executable path the local runtime expects for the pinned build. */
export function pinnedBrowserPath(environment = process.env) {
  const cacheHome = environment.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(cacheHome, ".wrangler", "chrome", `linux-${PINNED_BROWSER_BUILD}`, "chrome-linux64", "chrome");
}

function wrapperText() {
  return `#!/bin/sh\n# Written by the relay's local-browser setup: the system's Chromium stands in for the pinned build.\nexec ${SYSTEM_CHROMIUM} --no-sandbox "$@"\n`;
}

/** Places the wrapper (once); answers whether the local browser binding can run. */
export function prepareLocalBrowser() {
  if (process.platform !== "linux" || !existsSync(SYSTEM_CHROMIUM)) return false;
  const target = pinnedBrowserPath();
  const wanted = wrapperText();
  if (existsSync(target)) {
    // A real download of the pinned build (megabytes, not a short script) is kept as it is.
    if (statSync(target).size > 4096) return true;
    if (readFileSync(target, "utf8") === wanted) return true;
  }
  mkdirSync(path.dirname(target), { recursive: true });
  const staging = `${target}.${process.pid}`;
  writeFileSync(staging, wanted);
  chmodSync(staging, 0o755);
  renameSync(staging, target);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const ready = prepareLocalBrowser();
  console.log(ready ? `local browser binding ready (${pinnedBrowserPath()})` : "no system Chromium: the browser binding stays off");
}
