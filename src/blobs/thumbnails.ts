/**
 * Thumbnails (WIRE §4.6): `?w=` snaps up to one of the listed widths and is made by the
 * platform's Images binding (image-binding.ts; no codec bundled into the Worker; locally
 * miniflare runs it through sharp). A width above the largest, one at or above the
 * source's own width, a type that is not a still raster image (png, jpeg, webp, gif),
 * encryption at rest, or a resize that fails (twice) all serve the original (null here),
 * never an error. A variant is
 * made once, kept in R2 beside its source (`attachments/<id>/w<width>`), served from
 * there afterwards, never metered, and deleted with the source (deleteStoredBytes).
 */
import { errorLogLine } from "../db/query-errors";
import { config } from "../config";
import { objectKey, type AttachmentRow } from "./attachments";
import { transformImage } from "./image-binding";

export const THUMBNAIL_WIDTHS = [64, 128, 256, 512, 1024, 2048] as const;

/** Source types that get variants, and the type each variant is written as (GIF out is not offered locally: PNG). */
const VARIANT_TYPE: Record<string, "image/png" | "image/jpeg" | "image/webp"> = {
  "image/png": "image/png", "image/jpeg": "image/jpeg", "image/webp": "image/webp", "image/gif": "image/png",
};

export interface Variant {
  bytes: Uint8Array;
  mime: string;
  width: number;
}

/** The listed width a request snaps up to, or null when it asks for more than the largest. */
export function snapWidth(requested: number): number | null {
  return THUMBNAIL_WIDTHS.find((width) => width >= requested) ?? null;
}

export function variantKey(id: string, width: number): string {
  return `${objectKey(id)}/w${width}`;
}

export async function thumbnailFor(env: Env, row: AttachmentRow, requested: number): Promise<Variant | null> {
  const mime = VARIANT_TYPE[row.mime];
  const width = snapWidth(requested);
  if (!mime || width === null || config(env).flags.BLOB_ENCRYPT_AT_REST) return null;
  if (row.width !== null && width >= row.width) return null;
  const key = variantKey(row.id, width);
  const cached = await env.BLOBS.get(key);
  if (cached) return { bytes: new Uint8Array(await cached.arrayBuffer()), mime: cached.httpMetadata?.contentType ?? mime, width };
  const source = await env.BLOBS.get(objectKey(row.id));
  if (!source) return null;
  try {
    const { bytes, contentType } = await transformImage(env, new Uint8Array(await source.arrayBuffer()), [{ width, fit: "scale-down" }], mime);
    await env.BLOBS.put(key, bytes, { httpMetadata: { contentType } });
    return { bytes, mime: contentType, width };
  } catch (err) {
    console.warn("thumbnail failed; serving the original", row.id, width, errorLogLine(err));
    return null;
  }
}
