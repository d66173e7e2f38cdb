/**
 * The security headers of a served document (WIRE §4.5), built from the live manifest:
 * the CSP (connect-src 'self' + externalHosts; cdn widens only script/style-src to
 * https:; images, fonts and media from https: and data:; inline script and style
 * allowed; embeds → frame-src; embedAncestors → frame-ancestors on a public app that
 * needs no visitor identity, else 'none'), Permissions-Policy (listed capabilities
 * `self`, every other one denied), Referrer-Policy (no-referrer, or
 * strict-origin-when-cross-origin with embeds), robots and nosniff. An app whose pages
 * run the bot challenge (an `antiAbuse` collection on a relay with Turnstile) also lets
 * the challenge script's origin into script-src and frame-src, as Turnstile documents;
 * every other app stays closed to it.
 */
import { CAPABILITIES } from "../../manifest/origins";
import type { ServedApp, ServedPolicy } from "./context";
import { isIndexable } from "./context";

export function frameAncestors(served: ServedApp, policy: ServedPolicy): string[] {
  return served.app.visibility === "public" && !policy.visitorIdentity ? policy.csp.frameAncestors : [];
}

/** The origin the challenge script (and its frame) comes from, when the app's pages run it. */
export function challengeOrigin(policy: ServedPolicy): string | null {
  if (!policy.challenge) return null;
  try {
    return new URL(policy.challenge.script).origin;
  } catch {
    return null;
  }
}

export function contentSecurityPolicy(served: ServedApp, policy: ServedPolicy): string {
  const { csp } = policy;
  const list = (values: string[]) => (values.length > 0 ? values.join(" ") : "'none'");
  const ancestors = frameAncestors(served, policy);
  const challenge = challengeOrigin(policy);
  const scriptExtra = challenge ? [...csp.scriptSrcExtra, challenge] : csp.scriptSrcExtra;
  const frames = challenge ? [...csp.frameSrc, challenge] : csp.frameSrc;
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${scriptExtra.map((s) => ` ${s}`).join("")}`,
    `style-src 'self' 'unsafe-inline'${csp.styleSrcExtra.map((s) => ` ${s}`).join("")}`,
    "img-src 'self' data: blob: https:",
    "font-src 'self' data: https:",
    "media-src 'self' data: blob: https:",
    `connect-src ${list(csp.connectSrc)}`,
    `frame-src ${list(frames)}`,
    `frame-ancestors ${list(ancestors)}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join("; ");
}

export function permissionsPolicy(policy: ServedPolicy): string {
  const allowed = new Set(policy.csp.permissionsAllow);
  return CAPABILITIES.map((name) => `${name}=${allowed.has(name) ? "(self)" : "()"}`).join(", ");
}

/** Headers every served document (and the gate shell standing in for it) carries. */
export function documentHeaders(served: ServedApp, policy: ServedPolicy): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": contentSecurityPolicy(served, policy),
    "Permissions-Policy": permissionsPolicy(policy),
    "Referrer-Policy": policy.csp.referrerPolicy,
    "X-Content-Type-Options": "nosniff",
  };
  if (frameAncestors(served, policy).length === 0) headers["X-Frame-Options"] = "DENY";
  if (!isIndexable(served, policy)) headers["X-Robots-Tag"] = "noindex, nofollow";
  return headers;
}
