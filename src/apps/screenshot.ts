/**
 * An app's preview picture (spec A `GET /v1/apps/:id/screenshot?size=card|og`) as a PNG,
 * cached in R2 per app version and size. When the operator configured the Browser
 * Rendering binding it is a real rendering of the live page (src/apps/page-render.ts):
 * a public app as anyone sees it, a private one as an anonymous visitor holding a preview
 * token minted for the rendering and revoked right after. Otherwise, for link apps (their
 * share token is stored only as a hash) and whenever rendering fails, it is the relay's
 * brand card: the app's name from its live manifest, written large on a colour chosen
 * from the name (the manifest has no colour field, so one name always gets the same
 * colours) with a lighter band. A card stored because rendering failed is retried later
 * (see docs/operating.md).
 */
import { errorLogLine } from "../db/query-errors";
import { liveManifest } from "./live-manifest";
import type { AppRow } from "../db/apps";
import { GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS } from "./card-font";
import { Raster } from "./png";
import { browserBinding, renderPage } from "./page-render";
import { mintPreview, revokePreview } from "./preview";
import { appUrl } from "./urls";
import { config } from "../config";

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

/** What a stored picture is: a rendering of the page, or the brand card. */
export type PictureKind = "render" | "card";
/** With a browser configured, a stored card (rendering failed, or no browser then) is retried after this long. */
export const CARD_RETRY_MS = 10 * 60_000;
/** How long the preview token a private app's rendering uses may live (it is revoked as soon as the rendering ends). */
const RENDER_PREVIEW_TTL_SECONDS = 120;

/** Renders the live page through the browser binding; throws when that cannot be done. */
async function renderLive(env: Env, binding: Fetcher, app: AppRow, size: ScreenshotSize): Promise<Uint8Array> {
  const url = appUrl(config(env), app.slug);
  if (app.visibility === "public") return renderPage(binding, url, SCREENSHOT_SIZES[size]);
  if (app.visibility !== "private") throw new Error(`a ${app.visibility} app is not rendered`);
  const preview = await mintPreview(env, app.id, { label: "screenshot", ttlSeconds: RENDER_PREVIEW_TTL_SECONDS, agentId: null });
  try {
    return await renderPage(binding, `${url}#k=${preview.token}`, SCREENSHOT_SIZES[size]);
  } finally {
    await revokePreview(env, app.id, preview.view.id);
  }
}

/** A fresh picture: the rendering when a browser is configured and it works, else the card. */
async function drawPicture(env: Env, app: AppRow, size: ScreenshotSize): Promise<{ bytes: Uint8Array; kind: PictureKind }> {
  const binding = browserBinding(env);
  if (binding && app.visibility !== "link") {
    try {
      return { bytes: await renderLive(env, binding, app, size), kind: "render" };
    } catch (err) {
      console.warn(`screenshot of ${app.id}: rendering failed, drawing the card (${errorLogLine(err)})`);
    }
  }
  const manifest = await liveManifest(env, app);
  return { bytes: await brandCard(manifest?.app.name ?? app.slug, size), kind: "card" };
}

/** Whether a stored picture still answers: a rendering always; a card unless a browser could now do better. */
function stillGood(env: Env, stored: R2Object): boolean {
  if (stored.customMetadata?.kind === "render" || !browserBinding(env)) return true;
  return Date.now() - stored.uploaded.getTime() < CARD_RETRY_MS;
}

/** The app's picture at `size` for its live version: from the R2 cache, or made and stored. */
export async function screenshot(env: Env, app: AppRow, size: ScreenshotSize): Promise<{ bytes: Uint8Array; etag: string; cached: boolean; kind: PictureKind }> {
  const key = cacheKey(app, size);
  const etagOf = (kind: PictureKind) => `"${app.id}-v${app.currentVersion ?? 0}-${size}-${kind}"`;
  const hit = await env.BLOBS.get(key);
  if (hit && stillGood(env, hit)) {
    const kind: PictureKind = hit.customMetadata?.kind === "render" ? "render" : "card";
    return { bytes: new Uint8Array(await hit.arrayBuffer()), etag: etagOf(kind), cached: true, kind };
  }
  const { bytes, kind } = await drawPicture(env, app, size);
  await env.BLOBS.put(key, bytes, { httpMetadata: { contentType: "image/png" }, customMetadata: { kind } });
  return { bytes, etag: etagOf(kind), cached: false, kind };
}
