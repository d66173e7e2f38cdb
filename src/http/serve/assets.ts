/**
 * Deployed assets at their relative path on the app's origin, from R2 by sha256, with
 * hardened headers (WIRE §4.5): the exact stored type, nosniff, a sandbox CSP, inline
 * disposition only for types a browser renders harmlessly (images, audio, video, fonts),
 * ETag/304, single-range 206/416, a short public cache. Paths are matched exactly
 * against the live version's index — no decoding, no normalising, so `..`, `%2e%2e` and
 * encoded slashes simply match nothing. A private or link app's assets need the same
 * credential as its document: a header, or the per-path `svc_pass` the served document
 * put on its asset URLs.
 */
import { getBlob } from "../../blobs/store";
import { isInlineSafe } from "../../blobs/mime";
import type { AssetEntry } from "../../db/apps";
import type { ServeContext } from "./context";
import { ServeRefusal } from "./context";
import { ASSET_PASS_PARAM } from "./inject";
import { notFoundPage, plainPage } from "./pages";
import { assetPassValid } from "../../auth/asset-pass";
import { assertGatedServable, canOpen, requireKeys, viewerOf } from "./viewer";

type Range = { offset: number; length: number };

/**
 * One `bytes=` range against `size`: a range to serve, "unsatisfiable" (416), or null
 * to ignore the header and send everything (another unit, or several ranges).
 */
export function parseRange(header: string, size: number): Range | "unsatisfiable" | null {
  const value = header.trim();
  if (!/^bytes=/i.test(value)) return null;
  const spec = value.slice(6).trim();
  if (spec.includes(",")) return null;
  const match = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
  if (!match || (match[1] === "" && match[2] === "")) return "unsatisfiable";
  if (size === 0) return "unsatisfiable";
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (!Number.isSafeInteger(suffix) || suffix === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Number(match[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start > end || start >= size) return "unsatisfiable";
  return { offset: start, length: Math.min(end, size - 1) - start + 1 };
}

function etagMatches(header: string, etag: string): boolean {
  return header.split(",").map((t) => t.trim().replace(/^W\//, "")).some((t) => t === "*" || t === etag);
}

function fileName(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return /^[A-Za-z0-9._-]{1,200}$/.test(base) ? base : "download";
}

async function mayRead(c: ServeContext, path: string): Promise<boolean> {
  const served = c.get("served");
  if (served.app.visibility === "public") return true;
  assertGatedServable(served, c.env);
  const pass = new URL(c.req.url).searchParams.get(ASSET_PASS_PARAM);
  if (pass !== null && await assetPassValid(await requireKeys(c.env), pass, served.app.id, served.app.shareTokenHash, path)) return true;
  return canOpen(served, await viewerOf(c, served));
}

function assetHeaders(entry: AssetEntry, gated: boolean): Record<string, string> {
  return {
    "Content-Type": entry.mime,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
    "Content-Disposition": `${isInlineSafe(entry.mime) ? "inline" : "attachment"}; filename="${fileName(entry.path)}"`,
    ETag: `"${entry.sha256}"`,
    "Accept-Ranges": "bytes",
    "Cache-Control": gated ? "private, max-age=60" : "public, max-age=60",
    "Referrer-Policy": "no-referrer",
  };
}

export async function serveAsset(c: ServeContext): Promise<Response> {
  const served = c.get("served");
  const pathname = new URL(c.req.url).pathname;
  // Asset paths use only A–Z a–z 0–9 . _ - /: anything encoded cannot be one.
  if (pathname.includes("%") || pathname === "/") return notFoundPage();
  const path = pathname.slice(1);
  if (!(await mayRead(c, path))) {
    return plainPage(401, "Sign-in needed", "This file belongs to an app that is not public. Open the app itself first.");
  }
  const live = await served.live();
  const entry = live.assets.find((a) => a.path === path);
  if (!entry) return notFoundPage();

  const headers = assetHeaders(entry, served.app.visibility !== "public");
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, headers.ETag)) {
    return new Response(null, { status: 304, headers: { ETag: headers.ETag, "Cache-Control": headers["Cache-Control"] } });
  }

  const rangeHeader = c.req.header("range");
  const range = rangeHeader === undefined ? null : parseRange(rangeHeader, entry.size);
  if (range === "unsatisfiable") {
    return new Response(null, { status: 416, headers: { ...headers, "Content-Range": `bytes */${entry.size}` } });
  }
  if (c.req.method === "HEAD") {
    // Headers only: the index knows the size, so R2 is not asked for a body nobody reads.
    const length = range ? range.length : entry.size;
    const extra: Record<string, string> = range ? { "Content-Range": `bytes ${range.offset}-${range.offset + range.length - 1}/${entry.size}` } : {};
    return new Response(null, { status: range ? 206 : 200, headers: { ...headers, ...extra, "Content-Length": String(length) } });
  }
  const object = await getBlob(c.env.BLOBS, "asset", entry.sha256, range ?? undefined);
  if (!object) throw new ServeRefusal("unavailable", "This file could not be loaded right now. Try again in a moment.");
  if (range) {
    return new Response(object.body, {
      status: 206,
      headers: {
        ...headers,
        "Content-Range": `bytes ${range.offset}-${range.offset + range.length - 1}/${entry.size}`,
        "Content-Length": String(range.length),
      },
    });
  }
  return new Response(object.body, { status: 200, headers: { ...headers, "Content-Length": String(entry.size) } });
}
