/**
 * An app's preview picture (spec A `GET /v1/apps/:id/screenshot?size=card|og`): the
 * relay's brand card — the app's name from its live manifest, written large on a colour
 * chosen from the name (the manifest has no colour field, so one name always gets the
 * same colours) with a lighter band — as a PNG, cached in R2 per app version and size.
 * A real rendering of the page needs a headless browser binding the operator would add;
 * until one is configured this card is the answer (see docs/screenshots.md).
 */
import { liveManifest } from "./live-manifest";
import type { AppRow } from "../db/apps";
import { GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS } from "./card-font";
import { Raster } from "./png";

export const SCREENSHOT_SIZES = { card: { width: 640, height: 360 }, og: { width: 1200, height: 630 } } as const;
export type ScreenshotSize = keyof typeof SCREENSHOT_SIZES;

type Rgb = readonly [number, number, number];

/** HSL (hue in degrees, saturation and lightness 0..1) to RGB bytes. */
function hsl(hue: number, saturation: number, lightness: number): Rgb {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const sector = hue / 60;
  const x = chroma * (1 - Math.abs((sector % 2) - 1));
  const [r, g, b] = sector < 1 ? [chroma, x, 0] : sector < 2 ? [x, chroma, 0] : sector < 3 ? [0, chroma, x] : sector < 4 ? [0, x, chroma] : sector < 5 ? [x, 0, chroma] : [chroma, 0, x];
  const m = lightness - chroma / 2;
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

/** The card's colours, from the name: background, band and text. */
export function brandColours(name: string): { background: Rgb; band: Rgb; text: Rgb } {
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.codePointAt(0)!) >>> 0;
  const hue = hash % 360;
  return { background: hsl(hue, 0.55, 0.32), band: hsl(hue, 0.6, 0.5), text: [255, 255, 255] };
}

const MAX_CHARS = 24;

function cardText(name: string): string {
  const upper = name.toUpperCase().replace(/\s+/g, " ").trim() || "APP";
  return upper.length > MAX_CHARS ? `${upper.slice(0, MAX_CHARS - 3)}...` : upper;
}

/** Draws the brand card of `name` at `size` and answers its PNG bytes. */
export async function brandCard(name: string, size: ScreenshotSize): Promise<Uint8Array> {
  const { width, height } = SCREENSHOT_SIZES[size];
  const colours = brandColours(name);
  const raster = new Raster(width, height);
  raster.fill(0, 0, width, height, colours.background);
  raster.fill(0, height - Math.round(height / 8), width, Math.round(height / 8), colours.band);
  const text = cardText(name);
  const advance = GLYPH_WIDTH + 1;
  const scale = Math.max(1, Math.min(Math.floor((width * 0.86) / (text.length * advance)), Math.floor(height / 4 / GLYPH_HEIGHT)));
  const left = Math.round((width - (text.length * advance - 1) * scale) / 2);
  const top = Math.round((height - Math.round(height / 8) - GLYPH_HEIGHT * scale) / 2);
  [...text].forEach((ch, index) => {
    const rows = GLYPHS[ch] ?? GLYPHS[" "];
    rows.forEach((bits, row) => {
      for (let col = 0; col < GLYPH_WIDTH; col++) {
        if (bits & (1 << (GLYPH_WIDTH - 1 - col))) raster.fill(left + (index * advance + col) * scale, top + row * scale, scale, scale, colours.text);
      }
    });
  });
  return raster.png();
}

/** Where an app's cards are cached in R2 (purging the app deletes the prefix). */
export function screenshotPrefix(appId: string): string {
  return `screenshots/${appId}/`;
}

function cacheKey(app: AppRow, size: ScreenshotSize): string {
  return `${screenshotPrefix(app.id)}v${app.currentVersion ?? 0}/${size}.png`;
}

/** The app's card at `size` for its live version: from the R2 cache, or drawn and stored. */
export async function screenshot(env: Env, app: AppRow, size: ScreenshotSize): Promise<{ bytes: Uint8Array; etag: string; cached: boolean }> {
  const key = cacheKey(app, size);
  const etag = `"${app.id}-v${app.currentVersion ?? 0}-${size}"`;
  const hit = await env.BLOBS.get(key);
  if (hit) return { bytes: new Uint8Array(await hit.arrayBuffer()), etag, cached: true };
  const manifest = await liveManifest(env, app);
  const bytes = await brandCard(manifest?.app.name ?? app.slug, size);
  await env.BLOBS.put(key, bytes, { httpMetadata: { contentType: "image/png" } });
  return { bytes, etag, cached: false };
}
