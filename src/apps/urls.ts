/**
 * Where an app lives: `<scheme>://<slug>.<APPS_DOMAIN>/`, the scheme following the API
 * origin's (http locally, https in production), the reverse lookup from a Host, and
 * where a person signs in to it.
 */
import type { Config } from "../config";

export function appUrl(cfg: Config, slug: string): string {
  const scheme = cfg.apiOrigin.startsWith("https://") ? "https" : "http";
  return `${scheme}://${slug}.${cfg.appsDomain}/`;
}

/** The slug an app-origin Host names, or null when the host is not an app origin. */
export function slugFromHost(host: string, appsDomain: string): string | null {
  const h = host.toLowerCase();
  const suffix = `.${appsDomain.toLowerCase()}`;
  if (!h.endsWith(suffix)) return null;
  const label = h.slice(0, -suffix.length);
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : null;
}

/** Where a person signs in to an app: the API origin's `/authorize` for its slug. */
export function authorizeUrl(cfg: Config, slug: string): string {
  return `${cfg.apiOrigin}/authorize?app=${encodeURIComponent(slug)}`;
}
