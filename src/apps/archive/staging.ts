/**
 * Where an import keeps an archive while it is checked: the request body can be read only
 * once, and nothing may be created before every entry's size and sha256 are known to be
 * right, so each entry is read from the stream, hashed, and put in R2 under
 * `imports/<import id>/` (the small JSON entries and the document stay in memory). Only
 * after SHA256SUMS has been checked does the import read them back; the folder is deleted
 * when the import ends, whatever the outcome, and the cron removes what an import that died
 * midway left behind (through its lease, lease.ts; after a day for a folder without one).
 */
import { newId } from "../../auth/tokens";
import type { Config } from "../../config";
import { sha256Bytes } from "../../blobs/store";
import { readTar, invalidArchive, tooLarge } from "./tar";
import { entryCap, isRowsEntry, rowLine, ATTACHMENTS_JSON, DOCUMENT_HTML, EXPORT_JSON, MANIFEST_JSON, MAX_ENTRIES, SUMS } from "./format";

/** Kept in memory rather than staged: small, and read whole anyway. */
const IN_MEMORY = new Set([EXPORT_JSON, MANIFEST_JSON, DOCUMENT_HTML, ATTACHMENTS_JSON, SUMS]);

export interface StagedEntry {
  name: string;
  size: number;
  sha256: string;
}

export interface StagedArchive {
  prefix: string;
  /** Every entry but SHA256SUMS, in archive order. */
  entries: StagedEntry[];
  inMemory: Map<string, Uint8Array>;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function utf8(bytes: Uint8Array, name: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw invalidArchive(`"${name}" is not UTF-8 text`, { entry: name });
  }
}

/** Each line of a rows/ entry must be a row as an export writes it, before anything is created. */
function checkRowsEntry(name: string, bytes: Uint8Array): void {
  const lines = utf8(bytes, name).split("\n");
  lines.forEach((line, index) => {
    if (line === "" && index === lines.length - 1) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw invalidArchive(`line ${index + 1} of "${name}" is not JSON`, { entry: name, line: index + 1 });
    }
    if (!rowLine.safeParse(parsed).success) throw invalidArchive(`line ${index + 1} of "${name}" is not a row as an export writes it`, { entry: name, line: index + 1 });
  });
}

/** A new import's staging folder. */
export function newStagingPrefix(): string {
  return `imports/${newId("imp_")}/`;
}

/**
 * Reads the whole archive into staging under `prefix`; refuses (and removes what it staged)
 * a truncated, malformed or oversize one. `afterEntry` runs after each staged entry (the
 * import renews its lease there).
 */
export async function stageArchive(bucket: R2Bucket, body: ReadableStream<Uint8Array>, cfg: Config, prefix: string, afterEntry: () => Promise<void>): Promise<StagedArchive> {
  const staged: StagedArchive = { prefix, entries: [], inMemory: new Map() };
  const seen = new Set<string>();
  try {
    for await (const { name, bytes } of readTar(body, cfg.limits.MAX_IMPORT_BYTES, (entry) => entryCap(entry, cfg))) {
      if (seen.has(SUMS)) throw invalidArchive(`"${name}" follows SHA256SUMS, which an export writes last`, { entry: name });
      if (seen.has(name)) throw invalidArchive(`"${name}" appears twice`, { entry: name });
      seen.add(name);
      if (seen.size > MAX_ENTRIES) throw tooLarge(`it has more than ${MAX_ENTRIES} entries`, { limit: MAX_ENTRIES });
      if (isRowsEntry(name)) checkRowsEntry(name, bytes);
      if (IN_MEMORY.has(name)) staged.inMemory.set(name, bytes);
      else await bucket.put(staged.prefix + name, bytes);
      if (name !== SUMS) staged.entries.push({ name, size: bytes.byteLength, sha256: await sha256Bytes(bytes) });
      await afterEntry();
    }
    if (!seen.has(SUMS)) throw invalidArchive("it has no SHA256SUMS (an export ends with one)", { truncated: true });
    return staged;
  } catch (err) {
    await discardStaged(bucket, staged.prefix);
    throw err;
  }
}

export async function readStaged(bucket: R2Bucket, staged: StagedArchive, name: string): Promise<Uint8Array> {
  const held = staged.inMemory.get(name);
  if (held) return held;
  const object = await bucket.get(staged.prefix + name);
  if (!object) throw new Error(`import: staged entry ${name} is missing`);
  return new Uint8Array(await object.arrayBuffer());
}

export async function discardStaged(bucket: R2Bucket, prefix: string): Promise<void> {
  for (;;) {
    const listed = await bucket.list({ prefix, limit: 1000 });
    if (listed.objects.length === 0) return;
    await bucket.delete(listed.objects.map((object) => object.key));
    if (!listed.truncated) return;
  }
}

/** Staged entries older than this belong to an import that died midway (a Worker ended mid-request). */
const STAGING_KEPT_MS = 24 * 3600 * 1000;

/** The cron's sweep of staged entries left by imports that never finished; answers how many went. */
export async function sweepImportStaging(bucket: R2Bucket, now: number): Promise<number> {
  let removed = 0;
  let cursor: string | undefined;
  do {
    const listed = await bucket.list({ prefix: "imports/", limit: 1000, ...(cursor ? { cursor } : {}) });
    const stale = listed.objects.filter((object) => object.uploaded.getTime() < now - STAGING_KEPT_MS).map((object) => object.key);
    if (stale.length > 0) await bucket.delete(stale);
    removed += stale.length;
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return removed;
}
