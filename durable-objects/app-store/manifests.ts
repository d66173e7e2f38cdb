/**
 * The compiled manifest of the version a call names, and the store's one read of D1: the
 * manifest source of an app version (`app_versions`), loaded once per version. Everything
 * else the store knows about the app arrives with the call (contract.ts CallContext).
 *
 * The store also remembers the newest version it has been told of or loaded (`live_version`
 * in its meta): a version older than that is never served again, since its unique fields
 * and schemas no longer hold and reconciling its index would undo the newer one's.
 */
import { RelayError } from "../../src/errors";
import { parseManifest, manifestLimitsFrom, type CompiledManifest } from "../../src/manifest";
import type { Config } from "../../src/config";
import { staleAccess } from "./contract";
import { readMeta, writeMeta } from "./schema";
import { reconcileUnique } from "./unique";

/** Reads the manifest source of one app version from D1, or null when there is none. */
async function loadManifestSource(db: D1Database, appId: string, version: number): Promise<string | null> {
  const row = await db.prepare("SELECT manifest_json FROM app_versions WHERE app_id = ?1 AND version = ?2").bind(appId, version).first<{ manifest_json: string }>();
  return row?.manifest_json ?? null;
}

export function compileManifest(source: string, cfg: Config): CompiledManifest {
  return parseManifest(JSON.parse(source), manifestLimitsFrom(cfg));
}

export class Manifests {
  /** The newest version compiled, kept until a call names another. */
  current: { version: number; manifest: CompiledManifest } | null = null;
  /** The cached `live_version`. */
  private live: number | undefined = undefined;

  constructor(private readonly storage: DurableObjectStorage, private readonly db: D1Database, private readonly cfg: () => Config) {}

  liveVersion(): number {
    this.live ??= Number(readMeta(this.storage.sql, "live_version") ?? "0");
    return this.live;
  }

  /** A redeploy made `version` live (or a call named it): never go back. */
  advanceLive(version: number): void {
    if (version <= this.liveVersion()) return;
    writeMeta(this.storage.sql, "live_version", String(version));
    this.live = version;
  }

  /**
   * The compiled manifest of `version`: from memory, or loaded from D1 once (its unique
   * index reconciled with the rows). A version older than the live one is refused as
   * stale access, so the caller is checked again.
   */
  async load(appId: string, version: number): Promise<{ manifest: CompiledManifest; fresh: boolean }> {
    if (version < this.liveVersion()) throw staleAccess();
    if (this.current?.version === version) return { manifest: this.current.manifest, fresh: false };
    const source = await loadManifestSource(this.db, appId, version);
    if (source === null) throw new RelayError("app_not_found", "This app has no such version.");
    // Another call may have made a newer version live while this one read D1.
    if (version < this.liveVersion()) throw staleAccess();
    const manifest = compileManifest(source, this.cfg());
    this.current = { version, manifest };
    this.storage.transactionSync(() => reconcileUnique(this.storage.sql, manifest));
    writeMeta(this.storage.sql, "app_id", appId);
    // A call checked before a redeploy may still name the older version: never go back.
    this.advanceLive(version);
    return { manifest, fresh: true };
  }

  /** The storage was wiped (purge): nothing is remembered any more. */
  forget(): void {
    this.current = null;
    this.live = undefined;
  }
}
