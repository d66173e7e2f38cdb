/**
 * What an app export archive holds and how each entry reads (docs/export-import.md): the
 * entry names in the order an export writes them, the size each may have on import, and
 * the shapes of its JSON entries, so the writer (export.ts) and the reader (import.ts)
 * share one definition. Nothing here touches storage.
 *
 *   export.json            what was exported: format, source app, settings, asset index, retention overrides
 *   manifest.json          the live version's manifest, as deployed
 *   document.html          the live version's document
 *   assets/<sha256>        each asset's bytes (paths and types are in export.json)
 *   rows/<nnnnnn>.ndjson   live rows, one JSON object a line, keys, versions and stamps included
 *   attachments/<id>       the bytes of each attachment a row references
 *   attachments.json       those attachments' facts (type, name, size, sha256)
 *   SHA256SUMS             `<sha256>  <name>` for every entry above, last (`sha256sum -c` reads it)
 */
import * as z from "zod";
import type { Config } from "../../config";
import { AUTHOR_KINDS } from "../../manifest/conditions";

export const FORMAT = "relay-app-export";
export const FORMAT_VERSION = 1;

export const EXPORT_JSON = "export.json";
export const MANIFEST_JSON = "manifest.json";
export const DOCUMENT_HTML = "document.html";
export const ATTACHMENTS_JSON = "attachments.json";
export const SUMS = "SHA256SUMS";

export const assetEntryName = (sha256: string) => `assets/${sha256}`;
export const attachmentEntryName = (id: string) => `attachments/${id}`;
export const rowsEntryName = (page: number) => `rows/${String(page).padStart(6, "0")}.ndjson`;

const ASSET_NAME = /^assets\/[0-9a-f]{64}$/;
const ATTACHMENT_NAME = /^attachments\/att_[a-z0-9]{10,40}$/;
const ROWS_NAME = /^rows\/\d{6}\.ndjson$/;

/** Rows an export puts in one rows/ entry (the store also stops a page at 8 MiB of data). */
export const ROWS_PER_PAGE = 500;
/** A rows/ entry: a page of row data plus each row's key and stamps. */
const ROWS_ENTRY_BYTES = 16 * 1024 * 1024;
const JSON_ENTRY_BYTES = 4 * 1024 * 1024;
/** More entries than any app within the relay's limits can produce. */
export const MAX_ENTRIES = 20_000;

/** The largest an entry of `name` may be on import, or null when no such entry belongs in an export. */
export function entryCap(name: string, cfg: Config): number | null {
  const { limits } = cfg;
  if (name === EXPORT_JSON || name === ATTACHMENTS_JSON || name === SUMS) return JSON_ENTRY_BYTES;
  if (name === MANIFEST_JSON) return limits.MAX_MANIFEST_BYTES;
  if (name === DOCUMENT_HTML) return limits.MAX_DOCUMENT_BYTES;
  if (ASSET_NAME.test(name)) return limits.MAX_BLOB_BYTES;
  if (ATTACHMENT_NAME.test(name)) return Math.max(limits.MAX_BLOB_BYTES, limits.MAX_MEDIA_BLOB_BYTES);
  if (ROWS_NAME.test(name)) return ROWS_ENTRY_BYTES;
  return null;
}

export const isRowsEntry = (name: string) => ROWS_NAME.test(name);

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const iso = z.string().max(40).refine((text) => !Number.isNaN(Date.parse(text)), "must be an ISO-8601 time");
const axis = z.number().int().min(1).max(1_000_000).nullable();

export const exportDescription = z.object({
  format: z.literal(FORMAT),
  format_version: z.literal(FORMAT_VERSION),
  exported_at: iso,
  source: z.object({ app_id: z.string().max(100), slug: z.string().max(100), version: z.number().int() }),
  app: z.object({ visibility: z.enum(["private", "link", "public"]), timezone: z.string().max(64).nullable() }),
  assets: z.array(z.object({ path: z.string().max(512), sha256, size: z.number().int().min(0), mime: z.string().max(200) })).max(1000),
  retention: z.record(z.string().max(64), z.object({ maxRows: axis, maxAgeDays: axis })),
});
export type ExportDescription = z.infer<typeof exportDescription>;

export const attachmentFacts = z.array(z.object({
  id: z.string().regex(/^att_[a-z0-9]{10,40}$/), filename: z.string().max(255).nullable(), mime: z.string().max(200), size: z.number().int().min(0), sha256,
})).max(MAX_ENTRIES);
export type AttachmentFacts = z.infer<typeof attachmentFacts>;

const author = z.strictObject({ kind: z.enum(AUTHOR_KINDS as [string, ...string[]]), id: z.string().min(1).max(200) });

/** One line of a rows/ entry: a PortableRow (durable-objects/app-store/contract.ts). */
export const rowLine = z.strictObject({
  collection: z.string().min(1).max(64), key: z.string().min(1).max(128), data: z.unknown(), version: z.number().int().min(1),
  creator: author, editor: author, created_at: iso, updated_at: iso,
});

/** SHA256SUMS as written: one `<sha256>  <name>` line per entry. */
export function sumsText(sums: ReadonlyArray<{ name: string; sha256: string }>): string {
  return sums.map(({ name, sha256: digest }) => `${digest}  ${name}\n`).join("");
}

/** SHA256SUMS read back, or null when a line does not read. */
export function parseSums(text: string): Map<string, string> | null {
  const sums = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const match = /^([0-9a-f]{64}) [ *](\S{1,100})$/.exec(line);
    if (!match || sums.has(match[2])) return null;
    sums.set(match[2], match[1]);
  }
  return sums;
}
