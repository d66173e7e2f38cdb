/**
 * Custom domains (spec A `/v1/apps/:id/domain`, WIRE §2.2): an owner binds a host name
 * they control; the first one bound serves the app, each later one redirects to it. The
 * answer names the DNS records to publish: a CNAME to the operator's target
 * (CUSTOM_DOMAINS_TARGET) and a TXT record proving the binding. A domain's status turns
 * `active` when a request first reaches the relay under it (its DNS points here), which
 * the show answer reads live. A relay without a target answers 501
 * `custom_domains_not_enabled` to every domain call.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Config } from "../config";
import { db } from "../db/client";
import { appDomains } from "../db/operate-schema";
import { apps } from "../db/apps-schema";
import type { AppRow } from "../db/apps";
import { RelayError } from "../errors";
import { randomHex } from "../auth/tokens";

type Env = { DB: D1Database };
type DomainRow = typeof appDomains.$inferSelect;

/** Suffixes no owner controls: special-use names (RFC 6761, 6762, 8375) and the reverse zones. */
const RESERVED_SUFFIXES = ["localhost", "local", "internal", "invalid", "test", "example", "onion", "arpa", "home.arpa", "lan", "corp", "home"];

export interface DnsRecord {
  type: "CNAME" | "TXT";
  name: string;
  value: string;
}

export interface AppDomainView {
  domain: string;
  app_id: string;
  primary: boolean;
  redirect_to: string | null;
  status: "pending_dns" | "active";
  dns_records: DnsRecord[];
  created_at: string;
  active_since: string | null;
}

export function requireCustomDomains(cfg: Config): string {
  if (!cfg.customDomainsTarget) throw new RelayError("custom_domains_not_enabled", "This relay has no custom-domain support configured; the app stays at its default address.");
  return cfg.customDomainsTarget;
}

function hostOf(origin: string): string {
  try {
    return new URL(origin.includes("://") ? origin : `http://${origin}`).hostname.toLowerCase();
  } catch {
    return origin.toLowerCase();
  }
}

/** The bare, lowercase domain `input` names, or `domain_invalid` saying why not. */
export function parseDomain(input: string, cfg: Config): string {
  const refuse = (why: string) => new RelayError("domain_invalid", `"${input.slice(0, 100)}" ${why}.`, { domain: input.slice(0, 253) });
  const domain = input.trim().toLowerCase().replace(/\.$/, "");
  if (domain.length === 0 || domain.length > 253) throw refuse("is not a host name of 1 to 253 characters");
  if (/[/:@?#\s]/.test(domain)) throw refuse("must be a bare host name: no scheme, port, path or user");
  if (domain.includes("*")) throw refuse("is a wildcard; bind each host name on its own");
  const labels = domain.split(".");
  if (labels.length < 2) throw refuse("needs at least two labels, such as app.example.com");
  if (!labels.every((label) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(label)) || labels.every((l) => /^\d+$/.test(l))) throw refuse("is not a valid DNS name");
  if (/^\d+$/.test(labels[labels.length - 1])) throw refuse("looks like an IP address");
  const reserved = RESERVED_SUFFIXES.find((suffix) => domain === suffix || domain.endsWith(`.${suffix}`));
  if (reserved) throw refuse(`is under the reserved name .${reserved}, which nobody can publish records for`);
  for (const platform of [hostOf(cfg.appsDomain), hostOf(cfg.apiOrigin), cfg.customDomainsTarget ?? ""]) {
    if (platform && (domain === platform || domain.endsWith(`.${platform}`))) throw refuse("is one of the relay's own domains");
  }
  return domain;
}

function view(row: DomainRow, target: string): AppDomainView {
  return {
    domain: row.domain, app_id: row.appId, primary: row.redirectTo === null, redirect_to: row.redirectTo,
    status: row.firstRequestAt ? "active" : "pending_dns",
    dns_records: [
      { type: "CNAME", name: row.domain, value: target },
      { type: "TXT", name: `_relay-challenge.${row.domain}`, value: row.verifyToken },
    ],
    created_at: row.createdAt, active_since: row.firstRequestAt,
  };
}

async function domainsOf(env: Env, appId: string): Promise<DomainRow[]> {
  return db(env).select().from(appDomains).where(eq(appDomains.appId, appId)).orderBy(asc(appDomains.createdAt), asc(appDomains.domain));
}

/** Binds `domain` to the app: it serves when it is the app's first, else it redirects to the serving one. */
export async function bindDomain(env: Env, cfg: Config, app: AppRow, input: string): Promise<AppDomainView> {
  const target = requireCustomDomains(cfg);
  const domain = parseDomain(input, cfg);
  const existing = (await db(env).select().from(appDomains).where(eq(appDomains.domain, domain)).limit(1))[0];
  if (existing && existing.appId !== app.id) throw new RelayError("domain_taken", `${domain} is bound to another app.`, { domain });
  if (existing) throw new RelayError("domain_exists", `${domain} is already bound to this app.`, { domain });
  const primary = (await domainsOf(env, app.id)).find((row) => row.redirectTo === null);
  const row: DomainRow = {
    domain, appId: app.id, redirectTo: primary?.domain ?? null, verifyToken: `relay-verify=${randomHex(16)}`, createdAt: new Date().toISOString(), firstRequestAt: null,
  };
  // The primary key makes a race for one domain between two apps end in one binding.
  const inserted = await db(env).insert(appDomains).values(row).onConflictDoNothing().returning({ domain: appDomains.domain });
  if (inserted.length === 0) throw new RelayError("domain_taken", `${domain} was just bound elsewhere.`, { domain });
  return view(row, target);
}

/** The serving domain with its aliases, read now. */
export async function showDomains(env: Env, cfg: Config, appId: string): Promise<AppDomainView & { aliases: AppDomainView[] }> {
  const target = requireCustomDomains(cfg);
  const rows = await domainsOf(env, appId);
  const primary = rows.find((row) => row.redirectTo === null);
  if (!primary) throw new RelayError("domain_not_found", "This app has no custom domain.", { app_id: appId });
  return { ...view(primary, target), aliases: rows.filter((row) => row !== primary).map((row) => view(row, target)) };
}

/** Removes one domain (the serving one takes its aliases with it) or, without one, all; idempotent. */
export async function removeDomains(env: Env, cfg: Config, appId: string, input: string | undefined): Promise<void> {
  requireCustomDomains(cfg);
  if (input === undefined) {
    await db(env).delete(appDomains).where(eq(appDomains.appId, appId));
    return;
  }
  const domain = parseDomain(input, cfg);
  await db(env).batch([
    db(env).delete(appDomains).where(and(eq(appDomains.appId, appId), eq(appDomains.redirectTo, domain))),
    db(env).delete(appDomains).where(and(eq(appDomains.appId, appId), eq(appDomains.domain, domain))),
  ]);
}

/** What a request under `host` (no port) is: the bound domain with its app's slug, or null when none is bound. */
export async function domainForHost(env: Env, host: string): Promise<(DomainRow & { slug: string }) | null> {
  const found = (await db(env).select({ bound: appDomains, slug: apps.slug }).from(appDomains)
    .innerJoin(apps, eq(apps.id, appDomains.appId)).where(eq(appDomains.domain, host)).limit(1))[0];
  return found ? { ...found.bound, slug: found.slug } : null;
}

export async function markDomainActive(env: Env, domain: string): Promise<void> {
  await db(env).update(appDomains).set({ firstRequestAt: new Date().toISOString() }).where(and(eq(appDomains.domain, domain), isNull(appDomains.firstRequestAt)));
}
