/**
 * App import (docs/export-import.md): a new app from an export archive. The archive is
 * read whole into staging first (staging.ts) and checked — every entry's size and sha256
 * against SHA256SUMS, every entry export.json and attachments.json name present — so a
 * truncated, tampered or oversize archive is refused before anything exists. Then the app
 * is created through the ordinary deploy (new id and slug, the same manifest, document,
 * assets and visibility), its timezone set, the referenced attachments stored anew through
 * the upload pipeline, the rows written with their keys, versions and stamps (attachment
 * references rewritten to the new copies' ids) and the retention overrides applied. Until
 * then the import owns the app, not the person (src/db/apps.ts, importOwner): it is in no
 * list, its id answers app_not_found, its pages are not served, and it does not count
 * against the person's app cap; the import hands it over, whole, in one statement that
 * checks the cap. If any of that fails, the half-made app is purged: an import leaves a
 * whole app or none. If the relay dies midway, the import's lease (lease.ts) lapses and
 * the cron purges the app; a crashed import never holds a slot a retry needs.
 */
import { config } from "../../config";
import { RelayError } from "../../errors";
import { storeAttachment } from "../../blobs/attachments";
import { mapReferences, requireAccessibleRefs } from "../../blobs/refs";
import { countLiveApps, findAppForOwner, type AppRow } from "../../db/apps";
import { appCapReached, handOverOrRefuse } from "../hand-over";
import type { PortableRow } from "../../../durable-objects/app-store/contract";
import { unwrap } from "../../../durable-objects/app-store/contract";
import { createApp, type DeployActor } from "../deploy";
import { requireLiveManifest } from "../live-manifest";
import { changeAppSettings } from "../settings";
import { appStore } from "../store";
import { purgeIfStillHidden } from "../trash";
import { invalidArchive } from "./tar";
import { discardStaged, newStagingPrefix, readStaged, stageArchive, utf8, type StagedArchive } from "./staging";
import { takeImportLease, type ImportLease } from "./lease";
import {
  assetEntryName, attachmentEntryName, attachmentFacts, exportDescription, isRowsEntry, parseSums,
  ATTACHMENTS_JSON, DOCUMENT_HTML, EXPORT_JSON, MANIFEST_JSON, SUMS, type AttachmentFacts, type ExportDescription,
} from "./format";

function mismatch(why: string, entry: string): RelayError {
  return new RelayError("import_checksum_mismatch", `The archive does not match its SHA256SUMS: ${why}.`, { entry });
}

/** Every entry listed with its sha256, and nothing listed that is absent. */
function checkSums(staged: StagedArchive): void {
  const sums = parseSums(utf8(staged.inMemory.get(SUMS)!, SUMS));
  if (!sums) throw invalidArchive("SHA256SUMS does not read as `<sha256>  <name>` lines");
  for (const entry of staged.entries) {
    const listed = sums.get(entry.name);
    if (listed === undefined) throw mismatch(`"${entry.name}" is not listed`, entry.name);
    if (listed !== entry.sha256) throw mismatch(`the sha256 of "${entry.name}" is ${entry.sha256}, not ${listed}`, entry.name);
    sums.delete(entry.name);
  }
  const [missing] = sums.keys();
  if (missing !== undefined) throw mismatch(`"${missing}" is listed but not in the archive`, missing);
}

function parsedJson<T>(staged: StagedArchive, name: string, schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }): T {
  const bytes = staged.inMemory.get(name);
  if (!bytes) throw invalidArchive(`it has no ${name}`, { entry: name });
  let value: unknown;
  try {
    value = JSON.parse(utf8(bytes, name));
  } catch {
    throw invalidArchive(`${name} is not JSON`, { entry: name });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidArchive(`${name} is not as an export writes it`, { entry: name });
  return parsed.data;
}

interface CheckedArchive {
  description: ExportDescription;
  manifest: unknown;
  html: string;
  attachments: AttachmentFacts;
  rowsEntries: string[];
}

/** The archive's own description agrees with its entries: each asset and attachment it names is there, with that size and sha256. */
function checkContents(staged: StagedArchive): CheckedArchive {
  checkSums(staged);
  const description = parsedJson(staged, EXPORT_JSON, exportDescription);
  const manifest = parsedJson(staged, MANIFEST_JSON, { safeParse: (value: unknown) => ({ success: true as const, data: value }) });
  const attachments = parsedJson(staged, ATTACHMENTS_JSON, attachmentFacts);
  const document = staged.inMemory.get(DOCUMENT_HTML);
  if (!document) throw invalidArchive(`it has no ${DOCUMENT_HTML}`, { entry: DOCUMENT_HTML });
  const byName = new Map(staged.entries.map((entry) => [entry.name, entry]));
  const expect = (name: string, size: number, sha256: string) => {
    const entry = byName.get(name);
    if (!entry) throw mismatch(`"${name}" is named in the export but not in the archive`, name);
    if (entry.size !== size || entry.sha256 !== sha256) throw mismatch(`"${name}" is not the file the export describes`, name);
  };
  for (const asset of description.assets) expect(assetEntryName(asset.sha256), asset.size, asset.sha256);
  for (const file of attachments) expect(attachmentEntryName(file.id), file.size, file.sha256);
  return { description, manifest, html: utf8(document, DOCUMENT_HTML), attachments, rowsEntries: staged.entries.map((e) => e.name).filter(isRowsEntry) };
}

function rowsOf(bytes: Uint8Array, name: string): PortableRow[] {
  return utf8(bytes, name).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as PortableRow);
}

/** Fills the new app: timezone, attachments (new ids), rows (references rewritten), retention overrides. */
async function fill(env: Env, actor: DeployActor, app: AppRow, staged: StagedArchive, archive: CheckedArchive, lease: ImportLease): Promise<{ rows: number; attachments: number }> {
  if (archive.description.app.timezone !== null) await changeAppSettings(env, app, { timezone: archive.description.app.timezone });
  const uploader = { accountId: actor.ownerHumanId!, ownerAgentId: actor.agentId, kind: "agent" as const, id: actor.agentId };
  const newIds = new Map<string, string>();
  for (const file of archive.attachments) {
    const bytes = await readStaged(env.BLOBS, staged, attachmentEntryName(file.id));
    await lease.renew();
    const stored = await storeAttachment(env, uploader, { scope: "app", appId: app.id }, bytes, { declaredMime: file.mime, filename: file.filename });
    newIds.set(file.id, stored.id);
  }
  const manifest = await requireLiveManifest(env, app);
  const store = appStore(env, app.id);
  const call = { appId: app.id, version: app.currentVersion!, principal: { kind: "agent" as const, agentId: actor.agentId } };
  const writer = { agentId: actor.agentId, accountId: actor.ownerHumanId };
  let rows = 0;
  for (const name of archive.rowsEntries) {
    await lease.renew();
    const page = rowsOf(await readStaged(env.BLOBS, staged, name), name).map((row) => ({
      ...row, data: mapReferences(manifest.collections[row.collection]?.schema?.schema, row.data, (id) => newIds.get(id) ?? id) as PortableRow["data"],
    }));
    for (const collection of new Set(page.map((row) => row.collection))) {
      await requireAccessibleRefs(env, app, collection, page.filter((row) => row.collection === collection).map((row) => row.data), writer);
    }
    rows += unwrap(await store.importRows(call, page)).count;
  }
  for (const [collection, axes] of Object.entries(archive.description.retention)) {
    unwrap(await store.setRetention(call, collection, axes));
  }
  return { rows, attachments: newIds.size };
}

export interface ImportResult {
  body: Record<string, unknown>;
}

export async function importApp(env: Env, actor: DeployActor, body: ReadableStream<Uint8Array>, declaredBytes: number | null): Promise<ImportResult> {
  const cfg = config(env);
  const cap = cfg.limits.MAX_IMPORT_BYTES;
  if (declaredBytes !== null && declaredBytes > cap) {
    throw new RelayError("import_archive_too_large", `The archive is ${declaredBytes} bytes; the relay imports at most ${cap}.`, { limit: cap });
  }
  if (!actor.ownerHumanId) {
    throw new RelayError("agent_not_claimed", "This agent has no human yet; ask for a claim code and run `service agent claim <code>`.");
  }
  const stagingPrefix = newStagingPrefix();
  const lease = await takeImportLease(env.BLOBS, stagingPrefix);
  try {
    const staged = await stageArchive(env.BLOBS, body, cfg, stagingPrefix, () => lease.renew());
    return await checkAndCreate(env, actor, staged, lease);
  } finally {
    await discardStaged(env.BLOBS, stagingPrefix);
    await lease.release();
  }
}

/** From a staged archive to a whole new app, or none: a failure midway purges the half-made app. */
async function checkAndCreate(env: Env, actor: DeployActor, staged: StagedArchive, lease: ImportLease): Promise<ImportResult> {
  const archive = checkContents(staged);
  const ownerHumanId = actor.ownerHumanId!;
  // Refused before any work when the person has no room; the hand-over checks again.
  const cap = config(env).limits.MAX_APPS_PER_ACCOUNT;
  if ((await countLiveApps(env, ownerHumanId)) >= cap) throw appCapReached(cap);
  const assets = await Promise.all(archive.description.assets.map(async (asset) => ({
    path: asset.path, mime: asset.mime, bytes: await readStaged(env.BLOBS, staged, assetEntryName(asset.sha256)),
  })));
  const created = await createApp(env, { agentId: actor.agentId, ownerHumanId: lease.owner }, {
    html: archive.html, manifest: archive.manifest, visibility: archive.description.app.visibility, assets,
  });
  const answer = created.body as Record<string, unknown>;
  const appId = String(answer.app_id);
  try {
    const app = (await findAppForOwner(env, lease.owner, appId))!;
    const counts = await fill(env, actor, app, staged, archive, lease);
    // Only a step that outlasted the lease lets the sweep undo a live import.
    await handOverOrRefuse(env, appId, lease.owner, ownerHumanId, cap, "The import stalled and was undone; send the archive again.");
    return { body: { ...answer, imported: { from_app_id: archive.description.source.app_id, rows: counts.rows, attachments: counts.attachments, assets: assets.length } } };
  } catch (err) {
    await purgeIfStillHidden(env, appId, lease.owner, "import");
    throw err;
  }
}
