// The CLI's own version: read once from the checkout's package.json, so a release bump
// in one place changes `service --version` and the x-service-cli-version header alike.
import { readFileSync } from "node:fs";

/** Name used in upgrade instructions (WIRE §6.6 `<cli-package>`). */
export const CLI_PACKAGE = "service-relay-cli";

let cached: string | undefined;

export function cliVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    cached = typeof pkg.version === "string" ? pkg.version : "0.0.0";
  }
  return cached;
}

/**
 * The version announced to the relay in `x-service-cli-version`. Tests set
 * SERVICE_CLI_VERSION_OVERRIDE to play an older client against the relay's
 * MIN_CLI_VERSION gate; it is a testing aid, not a user setting.
 */
export function announcedVersion(env: NodeJS.ProcessEnv): string {
  const override = env.SERVICE_CLI_VERSION_OVERRIDE?.trim();
  return override ? override : cliVersion();
}
