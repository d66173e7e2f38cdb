/**
 * `/v1/apps/:id/domain` (spec A, WIRE §2.2): bind a custom domain (the answer names the
 * DNS records to publish), show the serving domain with its aliases, remove one or all.
 * The rules live in src/apps/domains.ts; host routing in src/http/serve/custom-host.ts.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { bindDomain, removeDomains, showDomains } from "../../apps/domains";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";

const appDomain = z.object({
  domain: z.string(), app_id: z.string(), primary: z.boolean(), redirect_to: z.string().nullable(),
  status: z.enum(["pending_dns", "active"]),
  dns_records: z.array(z.object({ type: z.enum(["CNAME", "TXT"]), name: z.string(), value: z.string() })),
  created_at: isoTime, active_since: isoTime.nullable(),
}).meta({ title: "AppDomain" });

const notEnabled = { 501: { description: "custom_domains_not_enabled: the relay has no custom-domain support configured" } };
const soft = { 410: { description: "soft_deleted: the app is in the trash" } };

export function appDomainRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/domain", tag: "apps", auth: "owner",
    summary: "Bind a custom domain; the answer lists the DNS records to publish (a CNAME to the relay's target and a TXT proof). The app's first domain serves it; each later one redirects to the first. A domain bound to another app is domain_taken; to this app, domain_exists",
    body: z.strictObject({ domain: z.string().max(300) }),
    responses: { 201: { description: "The bound domain", schema: appDomain }, ...errors(400, 401, 404, 409), ...soft, ...notEnabled },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await bindDomain(c.env, config(c.env), target, body.domain), 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/domain", tag: "apps", auth: "owner",
    summary: "The serving domain and its aliases, each with its status read now (active once a request has reached the relay under it)",
    responses: { 200: { description: "The serving domain with aliases", schema: appDomain.extend({ aliases: z.array(appDomain) }) }, ...errors(401, 404), ...soft, ...notEnabled },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await showDomains(c.env, config(c.env), target.id));
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id/domain", tag: "apps", auth: "owner",
    summary: "Remove one domain (?domain=; removing the serving one removes its aliases) or, without it, every domain of the app; idempotent",
    query: z.strictObject({ domain: z.string().max(300).optional() }),
    responses: { 204: { description: "Removed" }, ...errors(400, 401, 404), ...soft, ...notEnabled },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    await removeDomains(c.env, config(c.env), target.id, query.domain);
    return c.body(null, 204);
  });
}
