/**
 * Which origin a request is for. The Worker serves both the API origin and every app
 * origin (`<slug>.<APPS_DOMAIN>`); this decides from the URL's host (not the Host header:
 * the test pool sends none, and workerd puts the host in the URL either way). The API
 * origin's own host always stays the API, even if it sits under the apps domain, so the
 * console can never be shadowed by an app.
 */
import { config } from "../../config";
import { slugFromHost } from "../../apps/urls";

export function servedSlug(requestUrl: string, env: object): string | null {
  const cfg = config(env);
  let host: string;
  let apiHost: string | null;
  try {
    host = new URL(requestUrl).host.toLowerCase();
  } catch {
    return null;
  }
  try {
    apiHost = new URL(cfg.apiOrigin).host.toLowerCase();
  } catch {
    apiHost = null;
  }
  if (host === apiHost) return null;
  return slugFromHost(host, cfg.appsDomain);
}
