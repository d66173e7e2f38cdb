/**
 * The relay's own pages on app origins: not found, suspended, unavailable, wrong verb.
 * Plain HTML with no script and a CSP that allows nothing but inline style, so a page
 * the relay writes on an app's origin can never run code there. They never mention the
 * API origin's console or anything about other apps.
 */
import type { ServeRefusal } from "./context";
import { escapeHtml } from "./html";

const PAGE_HEADERS: Record<string, string> = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex, nofollow",
  "Cache-Control": "no-store",
};

export function plainPage(status: number, title: string, message: string, extraHeaders: Record<string, string> = {}): Response {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1b1f}@media (prefers-color-scheme:dark){body{color:#ececef;background:#16171a}}</style>
</head><body><main><h1>${escapeHtml(title)}</h1><p id="message">${escapeHtml(message)}</p></main></body></html>
`;
  return new Response(body, { status, headers: { ...PAGE_HEADERS, ...extraHeaders } });
}

export function notFoundPage(message = "There is nothing at this address."): Response {
  return plainPage(404, "Not found", message);
}

export function refusalPage(refusal: ServeRefusal): Response {
  switch (refusal.reason) {
    case "not_found":
      return notFoundPage(refusal.message);
    case "suspended":
      return plainPage(403, "App suspended", refusal.message);
    case "unconfigured":
      return plainPage(503, "Sign-in unavailable", refusal.message, { "Retry-After": "300" });
    case "unavailable":
      return plainPage(503, "Temporarily unavailable", refusal.message, { "Retry-After": "30" });
  }
}

export function methodNotAllowedPage(method: string, allow: string[]): Response {
  return plainPage(405, "Method not allowed", `${method} is not supported here; use ${allow.join(" or ")}.`, { Allow: allow.join(", ") });
}
