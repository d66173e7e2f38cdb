/**
 * Version skew: a CLI that announces a version below MIN_CLI_VERSION gets 426
 * `cli_upgrade_required`. Callers that send no version (not a CLI) pass.
 */
import type { MiddlewareHandler } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import type { AppEnv } from "../types";
import { compareVersions } from "../../versions";

export { compareVersions };

export const cliVersionGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const yours = c.req.header("x-service-cli-version");
  const min = config(c.env).minCliVersion;
  if (yours !== undefined && min && compareVersions(yours, min) < 0) {
    throw new RelayError("cli_upgrade_required", `This relay needs service CLI ${min} or newer; you have ${yours}.`, { min_version: min, your_version: yours });
  }
  await next();
};
