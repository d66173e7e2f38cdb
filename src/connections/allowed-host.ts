/**
 * The one host a connection's header may go to (WIRE §2.6): an exact DNS host
 * (`api.example.com`) or one leftmost wildcard label (`*.example.com`). A wildcard stands
 * for exactly one label, as in TLS certificates: `*.example.com` covers `eu.example.com`
 * but neither `example.com` nor `a.b.example.com`. Production wants a public-looking name
 * (two labels at least, no IP literal, nothing the outbound guard calls non-routable:
 * `*.local`, `*.internal`, metadata hosts; src/effects/ssrf.ts); development also takes
 * `localhost` and the loopback literals, where its local receivers listen (CONTRACT §3).
 */
import { refusedTarget } from "../effects/ssrf";

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const LOOPBACK_LITERALS = new Set(["127.0.0.1", "[::1]"]);

function isDnsName(host: string, development: boolean): boolean {
  if (host.length > 253) return false;
  const labels = host.split(".");
  if (!labels.every((label) => LABEL.test(label))) return false;
  // An all-numeric last label is an IPv4 literal (or a typo of one), never a DNS name.
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return false;
  if (development && host === "localhost") return true;
  return labels.length >= 2 && refusedTarget(`https://${host}/`, { development: false }) === null;
}

/**
 * `allowedHost` lowercased when it is an exact host or one leftmost `*.` wildcard; null
 * otherwise (a scheme, a port, a path, userinfo, an IP literal, a wildcard anywhere else).
 */
export function normalizeAllowedHost(value: string, development: boolean): string | null {
  const host = value.trim().toLowerCase();
  if (development && LOOPBACK_LITERALS.has(host)) return host;
  if (host.startsWith("*.")) {
    const base = host.slice(2);
    return isDnsName(base, false) ? host : null;
  }
  return isDnsName(host, development) ? host : null;
}

/** Whether `hostname` (a URL's, lowercase, IPv6 in brackets) is the one `allowedHost` admits. */
export function hostAllowed(allowedHost: string, hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (!allowedHost.startsWith("*.")) return host === allowedHost;
  const base = allowedHost.slice(1); // ".example.com"
  if (!host.endsWith(base)) return false;
  const label = host.slice(0, -base.length);
  return label.length > 0 && !label.includes(".");
}
