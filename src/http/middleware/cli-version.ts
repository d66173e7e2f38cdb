/**
 * Version skew: a CLI that announces a version below MIN_CLI_VERSION gets 426
 * `cli_upgrade_required`. Callers that send no version (not a CLI) pass.
 */
import type { MiddlewareHandler } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import type { AppEnv } from "../types";

function parts(version: string): number[] | null {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return match ? match.slice(1).map(Number) : null;
}

/** Negative when a < b. Unparseable versions sort lowest. */
export function compareVersions(a: string, b: string): number {
  const left = parts(a);
  const right = parts(b);
  if (!left || !right) return left ? 1 : right ? -1 : 0;
  for (let i = 0; i < 3; i++) if (left[i] !== right[i]) return left[i] - right[i];
  return 0;
}

export const cliVersionGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const yours = c.req.header("x-service-cli-version");
  const min = config(c.env).minCliVersion;
  if (yours !== undefined && min && compareVersions(yours, min) < 0) {
    throw new RelayError("cli_upgrade_required", `This relay needs service CLI ${min} or newer; you have ${yours}.`, { min_version: min, your_version: yours });
  }
  await next();
};
