/**
 * SVG uploads (WIRE §4.6: "SVG is rasterised to PNG"). An SVG file has no magic bytes, so
 * this says whether some text is an SVG document (its root element is `<svg>`), and reads
 * the canvas its root declares, so a drawing that asks for a huge canvas is refused as a
 * bomb from its text before anything rasterises it. A document type with an internal
 * subset (`<!ENTITY …>`, the "billion laughs" shape) is not taken as an SVG at all.
 */
import type { Dimensions } from "./dimensions";

const CSS_PIXELS_PER_UNIT: Record<string, number> = { "": 1, px: 1, pt: 96 / 72, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 };

function utf8Text(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** The root element's start tag (`<svg …>`), or null when the document's root is not `<svg>`. */
function rootTag(bytes: Uint8Array): string | null {
  const text = utf8Text(bytes);
  if (text === null || text.includes("<!ENTITY")) return null;
  // Skip the prolog: XML declaration, processing instructions, comments, a doctype without an internal subset.
  const prolog = /^(?:\s+|<\?[^]*?\?>|<!--[^]*?-->|<!DOCTYPE[^[>]*>)*/;
  const rest = text.slice(prolog.exec(text)![0].length);
  const tag = /^<svg(?=[\s/>])[^>]*>/.exec(rest);
  return tag ? tag[0] : null;
}

export function isSvgDocument(bytes: Uint8Array): boolean {
  return rootTag(bytes) !== null;
}

function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(tag);
  return match ? (match[2] ?? match[3]).trim() : null;
}

/** A length in CSS pixels, or null for relative units (%, em) and nonsense. */
function cssPixels(value: string | null): number | null {
  const match = value === null ? null : /^(\d+(?:\.\d+)?|\.\d+)(?:e([+-]?\d+))?\s*(px|pt|pc|in|cm|mm)?$/i.exec(value);
  if (!match) return null;
  const pixels = Number(match[1]) * 10 ** Number(match[2] ?? 0) * CSS_PIXELS_PER_UNIT[(match[3] ?? "").toLowerCase()];
  return Number.isFinite(pixels) && pixels > 0 ? Math.ceil(pixels) : null;
}

/** The canvas the root declares: width and height, else the viewBox's (scaled when one side is given). */
export function svgDimensions(bytes: Uint8Array): Dimensions | null {
  const tag = rootTag(bytes);
  if (tag === null) return null;
  const width = cssPixels(attribute(tag, "width"));
  const height = cssPixels(attribute(tag, "height"));
  if (width !== null && height !== null) return { width, height };
  const box = (attribute(tag, "viewBox") ?? "").split(/[\s,]+/).map(Number);
  const [boxWidth, boxHeight] = [box[2], box[3]];
  if (box.length !== 4 || !(boxWidth > 0) || !(boxHeight > 0) || !Number.isFinite(boxWidth * boxHeight)) return null;
  if (width !== null) return { width, height: Math.ceil((width * boxHeight) / boxWidth) };
  if (height !== null) return { width: Math.ceil((height * boxWidth) / boxHeight), height };
  return { width: Math.ceil(boxWidth), height: Math.ceil(boxHeight) };
}
