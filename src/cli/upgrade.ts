// The text of the 426 `cli_upgrade_required` answer (WIRE §6.6, exit 75): exactly two
// lines on stderr, the second telling the user how to upgrade for the way the CLI was
// installed (npm global, bun global, volta, or a checkout / unknown).
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CLI_PACKAGE } from "./version.ts";

export type InstallMethod = "npm-global" | "bun-global" | "volta" | "vendored";

export function installMethod(): InstallMethod {
  let here: string;
  try {
    here = realpathSync(fileURLToPath(import.meta.url)).replace(/\\/g, "/");
  } catch {
    return "vendored";
  }
  if (here.includes("/.volta/")) return "volta";
  if (here.includes("/.bun/install/global/")) return "bun-global";
  if (/\/lib\/node_modules\/|\/npm\/node_modules\//.test(here)) return "npm-global";
  return "vendored";
}

export function upgradeLines(minVersion: string | null, yourVersion: string | null, method: InstallMethod = installMethod()): [string, string] {
  const min = minVersion ?? "?";
  const yours = yourVersion ?? "?";
  const first = `service: this relay requires ${CLI_PACKAGE} >= ${min} (you have ${yours}).`;
  const spec = `"${CLI_PACKAGE}@>=${min}"`;
  switch (method) {
    case "npm-global":
      return [first, `To upgrade: npm install -g ${spec}`];
    case "bun-global":
      return [first, `To upgrade: bun install -g ${spec}`];
    case "volta":
      return [first, `To upgrade: volta install ${spec}`];
    default:
      return [first, `Install method: vendored/unknown; update the copy of ${CLI_PACKAGE} you run (for a checkout: git pull && npm install) to ${min} or newer.`];
  }
}
