/**
 * Stored originals (WIRE §4.6: "Stored originals of decodable images are re-encoded with
 * all metadata stripped; SVG is rasterised to PNG"). What R2 keeps of an uploaded picture
 * is not the uploaded file but this module's clean copy of it, so a phone photo's GPS
 * position, camera serial or XMP history never reaches anyone who downloads it:
 *
 * - JPEG, PNG, still WebP and AVIF are re-encoded, in their own format, by the platform's
 *   Images binding (locally: miniflare's sharp), whose output carries no metadata; a JPEG
 *   stored sideways with an EXIF orientation is turned upright first (jpeg-orientation.ts);
 * - SVG is rasterised by the same binding to PNG at the size its root declares;
 * - GIF and animated WebP are rewritten without their metadata blocks
 *   (container-metadata.ts), keeping every frame;
 * - anything else is stored as it came.
 *
 * A picture that does not decode is refused (`image_undecodable`) rather than kept with
 * whatever it carries. The caller stores, hashes and counts the returned bytes.
 */
import { RelayError } from "../errors";
import { imageDimensions, type Dimensions } from "./dimensions";
import { requireImageWithinPixels } from "./expansion";
import { sniff } from "./mime";
import { gifWithoutMetadata, isAnimatedWebp, webpWithoutMetadata } from "./container-metadata";
import { jpegOrientation, jpegWithoutApp1, UPRIGHT_TRANSFORMS } from "./jpeg-orientation";
import { transformImage } from "./image-binding";

type EncodedFormat = "image/jpeg" | "image/png" | "image/webp" | "image/avif";

/** Sniffed types the Images binding re-encodes, and the format each is stored as. */
export const STORED_AS: Readonly<Record<string, EncodedFormat>> = {
  "image/jpeg": "image/jpeg", "image/png": "image/png", "image/webp": "image/webp", "image/avif": "image/avif", "image/svg+xml": "image/png",
};

export interface StoredOriginal {
  bytes: Uint8Array;
  mime: string;
  width: number | null;
  height: number | null;
}

function undecodable(mime: string, reason: string): RelayError {
  return new RelayError("image_undecodable", `The ${mime} file does not decode: ${reason}.`, { mime, reason });
}

/** The pixel size the binding reads, for types whose header the relay does not read itself (AVIF). */
async function bindingDimensions(env: Env, mime: string, bytes: Uint8Array): Promise<Dimensions> {
  try {
    const info = await env.IMAGES.info(new Blob([bytes]).stream());
    if ("width" in info && info.width > 0 && info.height > 0) return { width: info.width, height: info.height };
  } catch (err) {
    throw undecodable(mime, err instanceof Error ? err.message.split("\n")[0].slice(0, 200) : "the image binding refused it");
  }
  throw undecodable(mime, "the image binding read no pixel size");
}

/** Re-encodes through the Images binding; the output must be a non-empty file of the asked format. */
async function reencoded(env: Env, mime: string, format: EncodedFormat, bytes: Uint8Array): Promise<StoredOriginal> {
  if (imageDimensions(mime, bytes) === null) requireImageWithinPixels(await bindingDimensions(env, mime, bytes));
  // A sideways JPEG goes in without its EXIF (so the tag cannot be applied twice) and with the turn that makes it upright.
  const turns = mime === "image/jpeg" ? UPRIGHT_TRANSFORMS[jpegOrientation(bytes)] ?? [] : [];
  const input = turns.length > 0 ? jpegWithoutApp1(bytes) : bytes;
  let output: Uint8Array;
  try {
    output = (await transformImage(env, input, turns, format)).bytes;
  } catch (err) {
    throw undecodable(mime, err instanceof Error ? err.message.split("\n")[0].slice(0, 200) : "the image binding refused it");
  }
  // A failed decode can also surface as an empty (or foreign) body rather than an error.
  if (output.length === 0 || sniff(output) !== format) throw undecodable(mime, mime === "image/svg+xml" ? "it did not rasterise to PNG" : "the image binding produced no image");
  const dimensions = imageDimensions(format, output) ?? await bindingDimensions(env, format, output);
  return { bytes: output, mime: format, ...dimensions };
}

/** The bytes R2 keeps for an upload of sniffed type `mime`, and their type and pixel size. */
export async function storedOriginal(env: Env, mime: string, bytes: Uint8Array, dimensions: Dimensions | null): Promise<StoredOriginal> {
  const kept = { mime, width: dimensions?.width ?? null, height: dimensions?.height ?? null };
  if (mime === "image/gif" || (mime === "image/webp" && isAnimatedWebp(bytes))) {
    const stripped = mime === "image/gif" ? gifWithoutMetadata(bytes) : webpWithoutMetadata(bytes);
    if (stripped === null) throw undecodable(mime, "its blocks do not hold together");
    return { ...kept, bytes: stripped };
  }
  const format = STORED_AS[mime];
  return format ? reencoded(env, mime, format, bytes) : { ...kept, bytes };
}
