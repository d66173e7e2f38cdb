/**
 * Head identity (WIRE §4.1): the <title>, meta description, favicon, Open Graph and
 * Twitter tags and robots meta the relay adds from the manifest's `app` block — each
 * only when the author's document does not already carry its own. The favicon is the
 * app's emoji icon drawn in an SVG, or the relay's default icon when it has none.
 */
import type { ServedApp, ServedPolicy } from "./context";
import { isIndexable } from "./context";
import { escapeHtml } from "./html";

/** What the author's document already has, found by a first HTMLRewriter pass. */
export interface HeadFacts {
  head: boolean;
  html: boolean;
  title: boolean;
  description: boolean;
  icon: boolean;
  robots: boolean;
  /** Lowercased `property`/`name` values of og:* and twitter:* meta tags present. */
  social: Set<string>;
}

export function emptyFacts(): HeadFacts {
  return { head: false, html: false, title: false, description: false, icon: false, robots: false, social: new Set() };
}

/**
 * The icon of an app that declares none: a plain mark, the same for every app, so a
 * browser's automatic favicon request never ends in a 404 and gated apps reveal nothing.
 */
export const DEFAULT_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect x="10" y="10" width="80" height="80" rx="20" fill="#1d4ed8"/><circle cx="50" cy="50" r="18" fill="#fdfdfc"/></svg>`;

export function iconSvg(icon: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><text x="50" y=".9em" font-size="85" text-anchor="middle">${escapeHtml(icon)}</text></svg>`;
}

function meta(attr: "name" | "property", key: string, content: string): string {
  return `<meta ${attr}="${key}" content="${escapeHtml(content)}">`;
}

export function identityHtml(facts: HeadFacts, served: ServedApp, policy: ServedPolicy): string {
  const { app } = policy;
  const out: string[] = [];
  if (!facts.title) out.push(`<title>${escapeHtml(app.name)}</title>`);
  if (!facts.description && app.description) out.push(meta("name", "description", app.description));
  if (!facts.icon) out.push(`<link rel="icon" href="data:image/svg+xml,${encodeURIComponent(app.icon ? iconSvg(app.icon) : DEFAULT_ICON_SVG)}">`);
  if (!facts.robots && !isIndexable(served, policy)) out.push(meta("name", "robots", "noindex, nofollow"));
  const social: Array<[attr: "name" | "property", key: string, value: string | null]> = [
    ["property", "og:type", "website"],
    ["property", "og:title", app.name],
    ["property", "og:description", app.description],
    ["property", "og:image", app.ogImage],
    // Only a public app's address is worth sharing; a link app's URL needs its token.
    ["property", "og:url", served.app.visibility === "public" ? served.root : null],
    ["name", "twitter:card", app.ogImage ? "summary_large_image" : "summary"],
    ["name", "twitter:title", app.name],
    ["name", "twitter:description", app.description],
    ["name", "twitter:image", app.ogImage],
  ];
  for (const [attr, key, value] of social) {
    if (value && !facts.social.has(key)) out.push(meta(attr, key, value));
  }
  return out.join("");
}
