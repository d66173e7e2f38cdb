/**
 * App export (docs/export-import.md): one tar archive of everything an app is — its live
 * manifest, document and assets, its live rows with keys, versions and stamps, the
 * attachments those rows reference, its visibility, timezone and retention overrides —
 * streamed entry by entry as it is read, rows a page at a time through the AppStore
 * contract, ending with SHA256SUMS over every entry. What gives access or holds a secret
 * is never read here, so it cannot end up in the archive: members and their addresses,
 * credentials, grant links, connections, webhook and inbound-hook secrets, share tokens.
 */
import { errorLogLine } from "../../db/query-errors";
import { RelayError } from "../../errors";
import { getVersion, type AppRow, type AssetEntry } from "../../db/apps";
import { getBlob } from "../../blobs/store";
import { attachmentById, isAttachmentId, objectKey, type AttachmentRow } from "../../blobs/attachments";
import { referencedIds } from "../../blobs/refs";
import type { CompiledManifest } from "../../manifest";
import type { CallContext } from "../../../durable-objects/app-store/contract";
import { unwrap } from "../../../durable-objects/app-store/contract";
import { requireLiveManifest } from "../live-manifest";
import { appStore } from "../store";
import { tarEnd, tarHeader, tarPadding } from "./tar";
import {
  assetEntryName, attachmentEntryName, rowsEntryName, sumsText, ATTACHMENTS_JSON, DOCUMENT_HTML, EXPORT_JSON, FORMAT, FORMAT_VERSION,
  MANIFEST_JSON, ROWS_PER_PAGE, SUMS, type AttachmentFacts, type ExportDescription,
} from "./format";

const encoder = new TextEncoder();

function hex(digest: ArrayBuffer): string {
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Writes tar entries and remembers each one's sha256 for SHA256SUMS. */
class EntryWriter {
  readonly sums: { name: string; sha256: string }[] = [];
  private readonly mtime = Math.floor(Date.now() / 1000);

  async *whole(name: string, bytes: Uint8Array): AsyncGenerator<Uint8Array> {
    this.sums.push({ name, sha256: hex(await crypto.subtle.digest("SHA-256", bytes)) });
    yield tarHeader(name, bytes.byteLength, this.mtime);
    yield bytes;
    yield tarPadding(bytes.byteLength);
  }

  /** An entry streamed from R2 without holding it whole; its sha256 is taken on the way. */
  async *streamed(name: string, size: number, body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array, string> {
    const digest = new crypto.DigestStream("SHA-256");
    const hashing = digest.getWriter();
    yield tarHeader(name, size, this.mtime);
    let seen = 0;
    for await (const chunk of body) {
      seen += chunk.byteLength;
      if (seen > size) throw new Error(`export: ${name} grew while it was read`);
      await hashing.write(chunk);
      yield chunk;
    }
    if (seen !== size) throw new Error(`export: ${name} has ${seen} bytes, not ${size}`);
    await hashing.close();
    const sha256 = hex(await digest.digest);
    this.sums.push({ name, sha256 });
    yield tarPadding(size);
    return sha256;
  }
}

/** Everything the archive needs that can be refused, read before the first byte goes out. */
interface ExportPlan {
  app: AppRow;
  manifest: CompiledManifest;
  manifestJson: string;
  document: R2ObjectBody;
  assets: AssetEntry[];
  call: CallContext;
}

/** Whether the exporter may carry this attachment out: one of the app's own, or the owner's account's. */
function exportable(row: AttachmentRow | undefined, app: AppRow): row is AttachmentRow {
  if (!row || row.deletedAt !== null || row.status !== "ready") return false;
  return (row.scope === "app" && row.appId === app.id) || row.accountId === app.ownerHumanId;
}

async function* archiveChunks(env: Env, plan: ExportPlan): AsyncGenerator<Uint8Array> {
  const { app, manifest } = plan;
  const store = appStore(env, app.id);
  const entries = new EntryWriter();
  const retention: ExportDescription["retention"] = {};
  for (const name of Object.keys(manifest.collections)) {
    const { override } = unwrap(await store.getRetention(plan.call, name));
    if (override.maxRows !== null || override.maxAgeDays !== null) retention[name] = override;
  }
  const description: ExportDescription = {
    format: FORMAT, format_version: FORMAT_VERSION, exported_at: new Date().toISOString(),
    source: { app_id: app.id, slug: app.slug, version: app.currentVersion! },
    app: { visibility: app.visibility, timezone: app.timezone },
    assets: plan.assets.map(({ path, sha256, size, mime }) => ({ path, sha256, size, mime })),
    retention,
  };
  yield* entries.whole(EXPORT_JSON, encoder.encode(JSON.stringify(description, null, 2)));
  yield* entries.whole(MANIFEST_JSON, encoder.encode(plan.manifestJson));
  yield* entries.streamed(DOCUMENT_HTML, plan.document.size, plan.document.body);
  const written = new Set<string>();
  for (const asset of plan.assets) {
    if (written.has(asset.sha256)) continue;
    written.add(asset.sha256);
    const object = await getBlob(env.BLOBS, "asset", asset.sha256);
    if (!object) throw new Error(`export: asset ${asset.sha256} of app ${app.id} is missing`);
    yield* entries.streamed(assetEntryName(asset.sha256), object.size, object.body);
  }

  const referenced = new Set<string>();
  let after = 0;
  for (let page = 1; ; page++) {
    const { rows, next_after } = unwrap(await store.exportRows(plan.call, after, ROWS_PER_PAGE));
    if (rows.length > 0) {
      for (const row of rows) {
        for (const id of referencedIds(manifest.collections[row.collection]?.schema?.schema, row.data)) if (isAttachmentId(id)) referenced.add(id);
      }
      yield* entries.whole(rowsEntryName(page), encoder.encode(rows.map((row) => `${JSON.stringify(row)}\n`).join("")));
    }
    if (next_after === null) break;
    after = next_after;
  }

  const facts: AttachmentFacts = [];
  for (const id of referenced) {
    const row = await attachmentById(env, id);
    if (!exportable(row, app)) continue;
    const object = await env.BLOBS.get(objectKey(id));
    if (!object) continue;
    const sha256 = yield* entries.streamed(attachmentEntryName(id), object.size, object.body);
    facts.push({ id, filename: row.filename, mime: row.mime, size: object.size, sha256 });
  }
  yield* entries.whole(ATTACHMENTS_JSON, encoder.encode(JSON.stringify(facts, null, 2)));
  // SHA256SUMS lists every entry before it; it does not list itself.
  const sums = encoder.encode(sumsText(entries.sums));
  yield tarHeader(SUMS, sums.byteLength, Math.floor(Date.now() / 1000));
  yield sums;
  yield tarPadding(sums.byteLength);
  yield tarEnd();
}

/** A generator's chunks as a byte stream, read as the client reads; a failure midway ends the stream in error. */
function streamOf(chunks: AsyncGenerator<Uint8Array>, appId: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else if (next.value.byteLength > 0) controller.enqueue(next.value);
      } catch (err) {
        console.error(`export of app ${appId} failed midway`, errorLogLine(err));
        controller.error(err);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

/** The archive of a live app, as a stream; what can be refused (no live version, no document) is refused before it starts. */
export async function exportApp(env: Env, app: AppRow, call: CallContext): Promise<ReadableStream<Uint8Array>> {
  const manifest = await requireLiveManifest(env, app);
  const version = await getVersion(env, app.id, app.currentVersion!);
  const document = version ? await getBlob(env.BLOBS, "doc", version.documentSha256) : null;
  if (!version || !document) throw new RelayError("conflict", "This app has no deployed document to export.");
  const plan: ExportPlan = { app, manifest, manifestJson: version.manifestJson, document, assets: JSON.parse(version.assetsJson) as AssetEntry[], call };
  return streamOf(archiveChunks(env, plan), app.id);
}
