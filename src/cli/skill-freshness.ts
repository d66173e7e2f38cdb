// Keeping the agent's copy of the skill document fresh (spec B, Versioning rule 5).
// `skill show` records, per relay URL, the version of the guide it printed. `skill
// version` compares that with the relay's version on every call; other network commands
// compare at most once a day (one small GET, after the command succeeded, errors ignored).
// When the relay's guide is newer, a `warning:` line on stderr suggests `service skill show`.
import type { ConfigStore } from "./config-store.ts";
import type { RelayClient } from "./http.ts";
import type { Output } from "./output.ts";
import { compareVersions } from "../versions.ts";

export const SKILL_PATH = "/skills/service/SKILL.md";
export const SKILL_VERSION_PATH = "/skills/service/SKILL.md/version";
export const CHECK_EVERY_MS = 24 * 60 * 60 * 1000;
const MARKER = /<!--\s*service skill v([0-9][^\s>]*)\s*-->/;

/** The version in the document's marker comment (`<!-- service skill vX.Y.Z -->`). */
export function markerVersion(markdown: string): string | null {
  return MARKER.exec(markdown)?.[1] ?? null;
}

/** Reads `{ version }`; a malformed answer counts as 0.0.0 (WIRE §2.11). */
export function versionFrom(body: unknown): string {
  const version = typeof body === "object" && body !== null ? (body as { version?: unknown }).version : undefined;
  return typeof version === "string" && version.trim() ? version.trim() : "0.0.0";
}

export function staleWarning(relayVersion: string, readVersion: string): string {
  return `the relay's skill document is version ${relayVersion}, newer than the copy you last read (${readVersion}); run \`service skill show\` to refresh it.`;
}

/** After `skill show`: remember what was read from this relay. */
export function recordRead(store: ConfigStore, url: string, version: string, now = new Date()): void {
  const cache = store.readSkillCache();
  cache.relays[url] = { version, read_at: now.toISOString(), checked_at: now.toISOString() };
  try {
    store.writeSkillCache(cache);
  } catch {
    /* the cache is an optimisation; never fail the command over it */
  }
}

/**
 * Compares the relay's version with the copy read from it and warns when behind.
 * Does nothing for a relay whose guide was never read with this CLI.
 */
export function compareWithRead(store: ConfigStore, url: string, relayVersion: string, out: Output, now = new Date()): void {
  const cache = store.readSkillCache();
  const entry = cache.relays[url];
  if (!entry) return;
  if (compareVersions(relayVersion, entry.version) > 0) out.warn(staleWarning(relayVersion, entry.version));
  cache.relays[url] = { ...entry, checked_at: now.toISOString() };
  try {
    store.writeSkillCache(cache);
  } catch {
    /* see recordRead */
  }
}

/** The cheap daily check other network commands run after succeeding. Never throws. */
export async function dailyCheck(store: ConfigStore, relay: RelayClient, out: Output, now = new Date()): Promise<void> {
  try {
    const entry = store.readSkillCache().relays[relay.baseUrl];
    if (!entry) return;
    const last = Date.parse(entry.checked_at);
    if (Number.isFinite(last) && now.getTime() - last < CHECK_EVERY_MS) return;
    const body = await relay.json("GET", SKILL_VERSION_PATH, { timeoutMs: 3000 });
    compareWithRead(store, relay.baseUrl, versionFrom(body), out, now);
  } catch {
    /* a failed freshness check must never turn a success into an error */
  }
}
