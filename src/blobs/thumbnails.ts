/**
 * Thumbnails (WIRE §4.6): `?w=` snaps up to one of the listed widths; a width at or
 * above the source's, or above the largest, or a type that is not a still raster image,
 * serves the original (null here). Not built yet: every request serves the original.
 */
import type { AttachmentRow } from "./attachments";

export const THUMBNAIL_WIDTHS = [64, 128, 256, 512, 1024, 2048] as const;

export interface Variant {
  bytes: Uint8Array;
  mime: string;
  width: number;
}

export async function thumbnailFor(_env: Env, _row: AttachmentRow, _width: number): Promise<Variant | null> {
  return null;
}
