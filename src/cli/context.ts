// Works out which relay, key and profile a command uses, and where each came from, by the
// precedence of WIRE §6.6: URL `--url` > SERVICE_URL > profile > default; key `--api-key`
// > SERVICE_API_KEY > profile; profile `--profile` > SERVICE_PROFILE > current_profile >
// "default". `config show` prints these sources; every network command uses them.
import { ConfigStore, PROFILE_NAME, type ConfigFile, type Profile } from "./config-store.ts";
import { CliError, invalidArgs } from "./errors.ts";
import { stringFlag, type FlagValues } from "./argv.ts";

export const DEFAULT_URL = "http://localhost:8787";
export const DEFAULT_PROFILE = "default";

export type ValueSource = "flag" | "env" | "profile" | "none";
export type ProfileSource = "flag" | "env" | "store" | "none";

export interface Resolved {
  profile: string;
  profileSource: ProfileSource;
  /** The stored profile, or null when it does not exist (yet). */
  stored: Profile | null;
  url: string;
  urlSource: ValueSource;
  apiKey: string | null;
  keySource: ValueSource;
}

export interface ResolveOptions {
  /** Commands that create or fill the profile (register, set-key) accept an unknown one. */
  allowMissingProfile?: boolean;
}

export function checkProfileName(name: string, source: string, helpCommand: string): string {
  if (PROFILE_NAME.test(name)) return name;
  const message = `Profile name ${JSON.stringify(name)} (from ${source}) is invalid: use 1 to 32 letters, digits, "_" or "-".`;
  if (source === "SERVICE_PROFILE") throw new CliError("config_error", message, { hint: "Fix or unset SERVICE_PROFILE." });
  throw invalidArgs(message, helpCommand);
}

/** Validates a relay base URL and strips trailing slashes. */
export function normaliseUrl(value: string, source: string, helpCommand: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    parsed = null as unknown as URL;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    const message = `The relay URL ${JSON.stringify(value)} (from ${source}) is not an http(s) URL.`;
    if (source === "--url") throw invalidArgs(message, helpCommand);
    throw new CliError("config_error", message, { hint: source === "SERVICE_URL" ? "Fix or unset SERVICE_URL." : "Fix the profile with `service config add <profile> --url <url>`." });
  }
  return value.replace(/\/+$/, "");
}

export function resolve(flags: FlagValues, env: NodeJS.ProcessEnv, config: ConfigFile, helpCommand: string, options: ResolveOptions = {}): Resolved {
  let profile: string;
  let profileSource: ProfileSource;
  const flagProfile = stringFlag(flags, "profile");
  const envProfile = env.SERVICE_PROFILE?.trim();
  if (flagProfile !== undefined) {
    profile = checkProfileName(flagProfile, "--profile", helpCommand);
    profileSource = "flag";
  } else if (envProfile) {
    profile = checkProfileName(envProfile, "SERVICE_PROFILE", helpCommand);
    profileSource = "env";
  } else if (config.current_profile) {
    profile = config.current_profile;
    profileSource = "store";
  } else {
    profile = DEFAULT_PROFILE;
    profileSource = "none";
  }

  const stored = Object.hasOwn(config.profiles, profile) ? config.profiles[profile] : null;
  if (!stored && (profileSource === "flag" || profileSource === "env") && !options.allowMissingProfile) {
    throw new CliError("config_error", `There is no profile named ${JSON.stringify(profile)} (from ${profileSource === "flag" ? "--profile" : "SERVICE_PROFILE"}).`, {
      hint: "List profiles with `service config list`; create one with `service agent register --profile <name>` or `service config add <name> --url <url>`.",
    });
  }

  let url: string;
  let urlSource: ValueSource;
  const flagUrl = stringFlag(flags, "url");
  const envUrl = env.SERVICE_URL?.trim();
  if (flagUrl !== undefined) {
    url = normaliseUrl(flagUrl, "--url", helpCommand);
    urlSource = "flag";
  } else if (envUrl) {
    url = normaliseUrl(envUrl, "SERVICE_URL", helpCommand);
    urlSource = "env";
  } else if (stored?.url) {
    url = normaliseUrl(stored.url, `profile ${profile}`, helpCommand);
    urlSource = "profile";
  } else {
    url = DEFAULT_URL;
    urlSource = "none";
  }

  let apiKey: string | null;
  let keySource: ValueSource;
  const flagKey = stringFlag(flags, "api-key");
  const envKey = env.SERVICE_API_KEY?.trim();
  if (flagKey !== undefined) {
    apiKey = flagKey;
    keySource = "flag";
  } else if (envKey) {
    apiKey = envKey;
    keySource = "env";
  } else if (stored?.api_key) {
    apiKey = stored.api_key;
    keySource = "profile";
  } else {
    apiKey = null;
    keySource = "none";
  }

  return { profile, profileSource, stored, url, urlSource, apiKey, keySource };
}

/** The key every authenticated command needs; a missing one is a local config_error. */
export function requireKey(resolved: Resolved): string {
  if (resolved.apiKey) return resolved.apiKey;
  throw new CliError("config_error", `No API key for profile ${JSON.stringify(resolved.profile)}.`, {
    hint: "Run `service agent register`, or pass --api-key / set SERVICE_API_KEY, or save a key with `service agent set-key -`.",
  });
}

/**
 * Masked display of a stored key (WIRE §6.6, CONTRACT §0): `config show` shows the first
 * 10 characters; `config list` shows 10 for a product-prefixed `svc_` key, else 8. A short
 * key never shows more than half of itself, so the mask never reveals a whole secret.
 */
export function maskKey(key: string | null | undefined, style: "show" | "list"): string | null {
  if (!key) return null;
  const wanted = style === "show" || key.startsWith("svc_") ? 10 : 8;
  return `${key.slice(0, Math.min(wanted, Math.floor(key.length / 2)))}…`;
}

/** The relay's own display prefix of a key (first 10 characters, no ellipsis). */
export function keyPrefix(key: string): string {
  return key.slice(0, Math.min(10, Math.floor(key.length / 2)));
}

export { ConfigStore };
