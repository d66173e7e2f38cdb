/**
 * Attachment references in row data (spec A: a string field with format
 * `service-attachment-id`; spec B `attachment_ref_not_accessible`). Before a row write
 * reaches the app's store, every value at such a field must name a ready, undeleted
 * attachment the writer may hand out: one of this app's app-scoped attachments, or one
 * owned by the writing agent or by the writing owner's account. The check costs nothing
 * for rows with no string shaped like an attachment id; only then is the live manifest
 * read to find which fields are references.
 */
import { inList } from "../db/in-list";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { attachments } from "../db/attachments-schema";
import type { AppRow } from "../db/apps";
import { liveManifest } from "../apps/live-manifest";
import { isAttachmentId, type AttachmentRow } from "./attachments";

export const ATTACHMENT_ID_FORMAT = "service-attachment-id";

/** Who writes the row, as far as handing out attachments goes. */
export interface RefWriter {
  agentId: string | null;
  /** The owning human when the writer acts with the owner's authority (an owner session, or a claimed agent). */
  accountId: string | null;
}

/** Whether any string anywhere in `data` is shaped like an attachment id (no I/O). */
export function mentionsAttachment(data: unknown): boolean {
  if (typeof data === "string") return isAttachmentId(data);
  if (Array.isArray(data)) return data.some(mentionsAttachment);
  if (data !== null && typeof data === "object") return Object.values(data).some(mentionsAttachment);
  return false;
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * `data` with every string that sits where `schema` says format service-attachment-id
 * passed through `replace` (an import gives references their new ids this way).
 */
export function mapReferences(schema: unknown, data: unknown, replace: (id: string) => string): unknown {
  if (!isSchema(schema)) return data;
  let out = data;
  if (schema.format === ATTACHMENT_ID_FORMAT && typeof out === "string") out = replace(out);
  if (Array.isArray(out)) {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    out = out.map((item, index) => mapReferences(index < prefix.length ? prefix[index] : schema.items, item, replace));
  } else if (isSchema(out) && isSchema(schema.properties)) {
    const properties = schema.properties;
    out = Object.fromEntries(Object.entries(out).map(([name, value]) => [name, mapReferences(properties[name], value, replace)]));
  }
  for (const branch of ["allOf", "anyOf", "oneOf"]) {
    if (Array.isArray(schema[branch])) for (const sub of schema[branch] as unknown[]) out = mapReferences(sub, out, replace);
  }
  return out;
}

/** The string values of `data` that sit where `schema` says format service-attachment-id. */
export function referencedIds(schema: unknown, data: unknown, found: string[] = []): string[] {
  mapReferences(schema, data, (id) => {
    found.push(id);
    return id;
  });
  return found;
}

function mayHandOut(row: AttachmentRow | undefined, appId: string, writer: RefWriter): boolean {
  if (!row || row.deletedAt !== null || row.status !== "ready") return false;
  if (row.scope === "app" && row.appId === appId) return true;
  if (writer.agentId !== null && row.ownerAgentId === writer.agentId) return true;
  return writer.accountId !== null && row.accountId === writer.accountId && row.scope === "agent";
}

/**
 * Attachment ids looked up per statement: the list is one JSON parameter, and a bound string
 * may be at most 2 MB (a batch of large rows could name hundreds of thousands of ids).
 */
const REFS_PER_READ = 5_000;

/** Refuses the write when any referenced attachment is not the writer's to reference. */
export async function requireAccessibleRefs(env: Env, app: AppRow, collection: string, datas: unknown[], writer: RefWriter): Promise<void> {
  if (!datas.some(mentionsAttachment)) return;
  const manifest = await liveManifest(env, app);
  const schema = manifest?.collections[collection]?.schema?.schema;
  if (!schema) return;
  const ids = [...new Set(datas.flatMap((data) => referencedIds(schema, data)))].filter(isAttachmentId);
  if (ids.length === 0) return;
  const rows = [];
  for (let start = 0; start < ids.length; start += REFS_PER_READ) {
    rows.push(...await db(env).select().from(attachments).where(inList(attachments.id, ids.slice(start, start + REFS_PER_READ))));
  }
  const byId = new Map(rows.map((row) => [row.id, row]));
  const refused = ids.filter((id) => !mayHandOut(byId.get(id), app.id, writer));
  if (refused.length > 0) {
    throw new RelayError("attachment_ref_not_accessible", `The row references ${refused.length === 1 ? "an attachment" : "attachments"} you may not use: ${refused.join(", ")}.`, { attachment_ids: refused });
  }
}
