// compileLive (src/apps/deploy.ts): a live version's manifest is compiled once per
// configuration and (app, version, visibility, timezone), then shared; a change to any of
// them compiles again, one that no longer compiles is remembered as such, and the cache
// keeps at most a bounded number of entries.
import { describe, expect, it } from "vitest";
import { config } from "../../../src/config";
import { compileLive, type LiveVersion } from "../../../src/apps/deploy";

const MANIFEST = JSON.stringify({ "x-service-manifest": { app: { name: "Cached" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } } });

function live(appId: string, version: number, overrides: { visibility?: string; timezone?: string | null; manifestJson?: string } = {}): LiveVersion {
  return {
    app: { id: appId, visibility: overrides.visibility ?? "private", timezone: overrides.timezone ?? null },
    version: { appId, version, manifestJson: overrides.manifestJson ?? MANIFEST },
  } as unknown as LiveVersion;
}

describe("compileLive", () => {
  it("compiles a version once and shares it; another version, visibility, timezone or configuration compiles again", () => {
    const cfg = config({ RELAY_ENV: "development" });
    const first = compileLive(live("app_cache1", 1), cfg);
    expect(first?.collections.notes).toBeDefined();
    expect(compileLive(live("app_cache1", 1), cfg)).toBe(first);
    expect(compileLive(live("app_cache1", 2), cfg)).not.toBe(first);
    expect(compileLive(live("app_cache1", 1, { visibility: "public" }), cfg)).not.toBe(first);
    expect(compileLive(live("app_cache1", 1, { timezone: "Europe/Paris" }), cfg)).not.toBe(first);
    expect(compileLive(live("app_cache1", 1), config({ RELAY_ENV: "development", MAX_COLLECTIONS_PER_APP: "7" }))).not.toBe(first);
  });

  it("a manifest that no longer compiles is null, and stays null for that version", () => {
    const cfg = config({ MAX_COLLECTIONS_PER_APP: "0" });
    expect(compileLive(live("app_cache2", 1), cfg)).toBeNull();
    expect(compileLive(live("app_cache2", 1), cfg)).toBeNull();
  });

  it("keeps a bounded number of entries: the least recently used is compiled again", () => {
    const cfg = config({ RELAY_ENV: "development", MAX_ROW_DATA_BYTES: "65000" });
    const kept = compileLive(live("app_cache_keep", 1), cfg);
    const evicted = compileLive(live("app_cache_gone", 1), cfg);
    for (let i = 0; i < 300; i++) {
      compileLive(live(`app_cache_fill${i}`, 1), cfg);
      if (i % 50 === 0) expect(compileLive(live("app_cache_keep", 1), cfg)).toBe(kept);
    }
    expect(compileLive(live("app_cache_keep", 1), cfg)).toBe(kept);
    expect(compileLive(live("app_cache_gone", 1), cfg)).not.toBe(evicted);
  });
});
