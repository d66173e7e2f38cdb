/**
 * Which origin a request is for. The Worker serves both the API origin and every app
 * origin (`<slug>.<APPS_DOMAIN>`); this decides from the URL's host (not the Host header:
 * the test pool sends none, and workerd puts the host in the URL either way). The API
 * origin's own host always stays the API, even if it sits under the apps domain, so the
 * console can never be shadowed by an app.
 */
import { config } from "../../config";
import { slugFromHost } from "../../apps/urls";

/** The API origin's host (lower case; null when it is no URL), parsed once per origin, not once per request. */
const apiHosts = new Map<string, string | null>();
function apiHostOf(apiOrigin: string): string | null {
  let host = apiHosts.get(apiOrigin);
  if (host === undefined) {
    try {
      host = new URL(apiOrigin).host.toLowerCase();
    } catch {
      host = null;
    }
    apiHosts.set(apiOrigin, host);
  }
  return host;
}

export function servedSlug(requestUrl: string, env: object): string | null {
  const cfg = config(env);
  let host: string;
  try {
    host = new URL(requestUrl).host.toLowerCase();
  } catch {
    return null;
  }
  if (host === apiHostOf(cfg.apiOrigin)) return null;
  return slugFromHost(host, cfg.appsDomain);
}
