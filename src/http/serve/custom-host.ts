/**
 * Host routing for custom domains (src/apps/domains.ts): a request whose host is neither
 * the API origin nor an app origin may be for a bound domain. The serving domain's
 * request is handed to the app-serving Hono app as a request to the app's own origin (the
 * first one marks the domain active); an alias answers 301 to the same path on the
 * serving domain. Anything else is left to the API app (its 404). The host comes from the
 * URL, as everywhere (in development a `Host` header picks it).
 */
import { errorLogLine } from "../../db/query-errors";
import { config } from "../../config";
import { domainForHost, markDomainActive } from "../../apps/domains";
import { appUrl } from "../../apps/urls";

export type CustomHostRoute = { kind: "serve"; request: Request } | { kind: "redirect"; response: Response };

export async function routeCustomHost(request: Request, env: Env, ctx: ExecutionContext): Promise<CustomHostRoute | null> {
  const cfg = config(env);
  if (!cfg.customDomainsTarget) return null;
  const url = new URL(request.url);
  if (url.host.toLowerCase() === new URL(cfg.apiOrigin).host.toLowerCase()) return null;
  const bound = await domainForHost(env, url.hostname.toLowerCase());
  if (!bound) return null;
  if (bound.redirectTo !== null) {
    return { kind: "redirect", response: new Response(null, { status: 301, headers: { Location: `${url.protocol}//${bound.redirectTo}${url.pathname}${url.search}` } }) };
  }
  if (!bound.firstRequestAt) ctx.waitUntil(markDomainActive(env, bound.domain).catch((err) => console.error(`domains: ${bound.domain} could not be marked active`, errorLogLine(err))));
  const origin = new URL(appUrl(cfg, bound.slug)).origin;
  return { kind: "serve", request: new Request(`${origin}${url.pathname}${url.search}`, request) };
}
