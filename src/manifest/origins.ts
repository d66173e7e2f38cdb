/**
 * Everything in a manifest that names another origin or a browser power: `externalHosts`
 * (connect-src), `embeds` (frame-src), `embedAncestors` (frame-ancestors), `capabilities`
 * (Permissions-Policy), outbound webhook urls, and the CSP source lists built from them.
 * One file so the page's security headers, the compat gate and the disclosure all agree
 * on what an origin is and when one list covers another.
 */
import type { ErrorCode } from "../errors";
import { isDevelopmentLoopbackHost, refusedTarget } from "../effects/ssrf";
import { at, expectArray, fail } from "./read";
import type { CspSources } from "./types";

export const CAPABILITIES = [
  "camera", "microphone", "autoplay", "fullscreen", "picture-in-picture", "encrypted-media", "geolocation",
  "accelerometer", "gyroscope", "magnetometer", "xr-spatial-tracking", "clipboard-write", "web-share",
  "display-capture", "screen-wake-lock", "serial", "usb", "hid", "midi", "publickey-credentials-get", "payment",
] as const;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A public DNS name: at least two labels, no IP literal, no all-digit top-level label, and
 * none the outbound guard refuses (src/effects/ssrf.ts: `*.local`, `*.internal`,
 * `*.home.arpa`, `*.localdomain`, reverse-DNS and cloud metadata names). One judgement for
 * every origin a manifest names: a page's `externalHosts` and `embeds` would point the
 * visitor's browser at their own network, as a webhook would point the relay at its own.
 * That last judgement came after manifests were first accepted, so a page origin is held
 * to it only when the manifest is deployed (`publicOnly`): a stored manifest that names
 * such a host keeps loading, and its app keeps working, until it is next deployed.
 */
function checkDnsName(host: string, path: string, code: ErrorCode, publicOnly: boolean): void {
  if (host.length > 253) fail(code, path, "host name is too long");
  if (host.startsWith("[") || host.includes(":")) fail(code, path, "IP literals are not allowed; use a DNS name");
  const labels = host.split(".");
  if (labels.every((l) => /^\d+$/.test(l)) || /^\d+$/.test(labels[labels.length - 1])) {
    fail(code, path, "IP literals are not allowed; use a DNS name");
  }
  if (labels.length < 2) fail(code, path, `"${host}" is not a public DNS name (needs at least two labels)`);
  for (const label of labels) {
    if (!LABEL.test(label)) fail(code, path, `"${host}" is not a valid DNS name (ASCII letters, digits and -; punycode for other scripts)`);
  }
  const refusal = publicOnly ? refusedTarget(`https://${host}/`, { development: false }) : null;
  if (refusal !== null) fail(code, path, `must be a public host: ${refusal}`);
}

/**
 * One `externalHosts` / `embeds` entry: `https://` + DNS name, optionally one leftmost
 * `*.` with at least two labels after it; no port, path, query, fragment or userinfo.
 * A single trailing `/` is tolerated and dropped. Returns the lowercased origin.
 */
export function parseHostOrigin(raw: unknown, path: string, code: ErrorCode, publicOnly: boolean): string {
  if (typeof raw !== "string") fail(code, path, "must be a string such as https://api.example.com");
  const match = /^https:\/\/(.*)$/i.exec(raw);
  if (!match) fail(code, path, "must start with https://");
  let rest = match[1];
  if (rest.endsWith("/")) rest = rest.slice(0, -1);
  if (/[/?#]/.test(rest)) fail(code, path, "must be an origin only: no path, query or fragment");
  if (rest.includes("@")) fail(code, path, "must not carry userinfo");
  if (/:\d*$/.test(rest) && !rest.startsWith("[")) fail(code, path, "must not carry a port");
  let host = rest.toLowerCase();
  let wildcard = false;
  if (host.startsWith("*.")) {
    wildcard = true;
    host = host.slice(2);
  }
  if (host.includes("*")) fail(code, path, "only one leftmost *. wildcard is allowed");
  checkDnsName(host, path, code, publicOnly);
  return `https://${wildcard ? "*." : ""}${host}`;
}

function splitOrigin(origin: string): [string, string] {
  const i = origin.indexOf("://");
  return [origin.slice(0, i), origin.slice(i + 3).replace(/:\d+$/, "")];
}

/**
 * True when `origin` (possibly itself a wildcard) is reachable through some entry of
 * `list`: an equal entry, or a wildcard `*.example.com` whose suffix contains the host
 * (any depth; the bare apex is not matched, as in CSP).
 */
export function originCovered(origin: string, list: string[]): boolean {
  const [scheme, host] = splitOrigin(origin);
  const candidate = host.startsWith("*.") ? host.slice(1) : host;
  return list.some((entry) => {
    if (entry === origin) return true;
    const [entryScheme, entryHost] = splitOrigin(entry);
    if (entryScheme !== scheme || !entryHost.startsWith("*.")) return false;
    const suffix = entryHost.slice(1);
    return candidate.endsWith(suffix) && candidate.length > suffix.length;
  });
}

function normaliseOwnOrigin(origin: string | undefined): string | null {
  if (!origin) return null;
  return origin.toLowerCase().replace(/\/+$/, "");
}

export function compileHostList(
  value: unknown,
  key: "externalHosts" | "embeds",
  max: number,
  appOrigin: string | undefined,
  path: string,
  publicOnly: boolean,
): string[] {
  if (value === undefined) return [];
  const code: ErrorCode = key === "externalHosts" ? "external_host_invalid" : "embed_invalid";
  const tooMany: ErrorCode = key === "externalHosts" ? "too_many_external_hosts" : "too_many_embeds";
  const list = expectArray(value, path, "manifest_invalid");
  if (list.length > max) {
    fail(tooMany, path, `has ${list.length} entries; at most ${key === "externalHosts" ? "MAX_EXTERNAL_HOSTS" : "MAX_EMBEDS"} (${max}) are allowed`, { limit: max });
  }
  const own = normaliseOwnOrigin(appOrigin);
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const entryPath = at(path, i);
    const origin = parseHostOrigin(raw, entryPath, code, publicOnly);
    if (seen.has(origin)) fail(code, entryPath, `duplicate origin ${origin}`);
    seen.add(origin);
    if (own && (origin === own || (own.startsWith("https://") && originCovered(own, [origin])))) {
      fail(code, entryPath, "must not name the app's own origin");
    }
    return origin;
  });
}

/**
 * `embedAncestors`: exact origins allowed to frame this app. https with any public DNS
 * name (a port is allowed), or http://localhost[:port] / http://127.0.0.1[:port]; never a
 * wildcard, path, query or userinfo.
 */
export function compileEmbedAncestors(value: unknown, max: number, path: string, publicOnly: boolean): string[] {
  if (value === undefined) return [];
  const list = expectArray(value, path, "manifest_invalid");
  if (list.length > max) fail("too_many_embeds", path, `has ${list.length} entries; at most MAX_EMBEDS (${max}) are allowed`, { limit: max });
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const entryPath = at(path, i);
    const code: ErrorCode = "embed_invalid";
    if (typeof raw !== "string") fail(code, entryPath, "must be an origin string");
    if (raw.includes("*")) fail(code, entryPath, "wildcards are never allowed in embedAncestors");
    const match = /^(https?):\/\/([^/?#@]+)\/?$/i.exec(raw);
    if (!match) fail(code, entryPath, "must be an exact origin (scheme and host, optional port; no path, query or userinfo)");
    const scheme = match[1].toLowerCase();
    const hostPort = match[2].toLowerCase();
    const portMatch = /^(.*?)(?::(\d{1,5}))?$/.exec(hostPort)!;
    const host = portMatch[1];
    const port = portMatch[2];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) fail(code, entryPath, "port out of range");
    if (scheme === "http") {
      if (host !== "localhost" && host !== "127.0.0.1") fail(code, entryPath, "http is accepted only for localhost and 127.0.0.1");
    } else {
      checkDnsName(host, entryPath, code, publicOnly);
    }
    const origin = `${scheme}://${host}${port ? `:${port}` : ""}`;
    if (seen.has(origin)) fail(code, entryPath, `duplicate origin ${origin}`);
    seen.add(origin);
    return origin;
  });
}

export function compileCapabilities(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  const list = expectArray(value, path, "manifest_invalid");
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const entryPath = at(path, i);
    if (typeof raw !== "string" || !(CAPABILITIES as readonly string[]).includes(raw)) {
      fail("capability_invalid", entryPath, `must be one of ${CAPABILITIES.join(", ")}`);
    }
    if (seen.has(raw)) fail("capability_invalid", entryPath, `duplicate capability "${raw}"`);
    seen.add(raw);
    return raw;
  });
}

/**
 * An outbound target url (webhooks, schedule webhooks): public https, DNS name only, no
 * userinfo; path and query allowed. In development mode loopback http/https on any port
 * (127.0.0.1, localhost, [::1], written exactly so, as the guard takes them) is also
 * accepted (CONTRACT §3). The runtime guard still re-checks every send; this is the
 * deploy-time check, and it ends with the guard's own judgement (src/effects/ssrf.ts), so
 * a deploy never accepts a target every send would refuse (metadata hosts by name,
 * `*.home.arpa`, `*.localdomain`, reverse-DNS names).
 */
export function checkTargetUrl(raw: unknown, path: string, code: ErrorCode, development: boolean, deploying: boolean): string {
  if (typeof raw !== "string") fail(code, path, "must be an https url");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(code, path, "must be an absolute https url");
  }
  if (url.username || url.password) fail(code, path, "must not carry userinfo");
  // The outbound guard's judgement is passed when the manifest is deployed; a stored one is
  // not judged anew (its sends are, each time, by the same guard).
  const refusal = deploying ? refusedTarget(raw, { development }) : null;
  if (development && isDevelopmentLoopbackHost(url.hostname) && refusal === null) return raw;
  if (url.protocol !== "https:") fail(code, path, "must use https");
  checkDnsName(url.hostname, path, code, deploying);
  if (refusal !== null) fail(code, path, `must be a public host: ${refusal}`);
  return raw;
}

/**
 * A relative target (`/services/data/v60/sobjects/Case`, WIRE §6.1): only beside a
 * `connection`, resolved when the rule fires against the connection's captured instance
 * base (an oauth2 connection with `instanceField`). A path on one host: it starts with a
 * single `/`, has no backslash, whitespace or control character, and stays a path when
 * resolved (so `//host/x` and `/\\host` are refused).
 */
export function isRelativeTarget(raw: string): boolean {
  return raw.startsWith("/");
}

export function checkRelativeTarget(raw: string, path: string, code: ErrorCode): string {
  if (raw.startsWith("//") || /[\\\s\u0000-\u001f\u007f]/.test(raw) || raw.length > 2048) {
    fail(code, path, "a relative url must be a path starting with a single / (no backslash, spaces or control characters)");
  }
  const probe = new URL(raw, "https://instance.invalid");
  if (probe.origin !== "https://instance.invalid") fail(code, path, "a relative url must stay on the connection's instance");
  return raw;
}

/** What a rule's url names for disclosure and compat: the origin, or the connection whose instance a relative url goes to. */
export function ruleTarget(url: string, connection: string | null): string {
  return isRelativeTarget(url) ? `connection:${connection}` : targetOrigin(url);
}

/** The origin a target url sends to, for disclosure and compat comparisons. */
export function targetOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export function buildCsp(externalHosts: string[], embeds: string[], embedAncestors: string[], cdn: boolean, capabilities: string[]): CspSources {
  return {
    connectSrc: ["'self'", ...externalHosts],
    frameSrc: [...embeds],
    frameAncestors: [...embedAncestors],
    scriptSrcExtra: cdn ? ["https:"] : [],
    styleSrcExtra: cdn ? ["https:"] : [],
    referrerPolicy: embeds.length > 0 ? "strict-origin-when-cross-origin" : "no-referrer",
    permissionsAllow: [...capabilities],
  };
}
