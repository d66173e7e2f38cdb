/**
 * Every setting the relay reads, with its default, parsed once per environment object.
 * Routes read `config(env)` instead of `env.X` so defaults and number parsing live in one
 * place and a missing variable never turns into NaN or undefined deep inside a handler.
 */

export type RegistrationMode = "open" | "secret" | "closed";

export interface Config {
  development: boolean;
  apiOrigin: string;
  appsDomain: string;
  mailFrom: string;
  registrationMode: RegistrationMode;
  registrationSecret: string | null;
  minCliVersion: string | null;
  operatorEmails: string[];
  /**
   * Per-IP limiter buckets (requests per window; 0 is off, the development default).
   * `pageWrite`: anonymous and visitor writes from app pages, per minute (WIRE §5.6).
   * `invite`: adding a member and offering a
   * transfer, the routes that mail someone else (their daily per-owner cap is the limit
   * INVITE_MAILS_PER_OWNER_DAY). `ingest`: deliveries to inbound hook URLs, per minute.
   */
  rateLimit: { windowSeconds: number; register: number; deviceCode: number; deviceToken: number; requestLink: number; claim: number; invite: number; pageWrite: number; ingest: number };
  maxJsonBodyBytes: number;
  /** Cap on a deploy or redeploy body: the document plus inline assets, base64-encoded. */
  maxDeployBodyBytes: number;
  /**
   * Key that signs app-session tokens and asset passes on app origins (`APP_SESSION_SECRET`,
   * a Worker secret of at least 32 characters). Development mode falls back to a fixed
   * key; in production a missing or short secret is null and gated apps answer 503.
   */
  appSessionSecret: string | null;
  /**
   * The secret outbound connections' credentials are sealed with (`CONNECTIONS_KEY`, a
   * Worker secret of at least 32 characters; src/connections/sealing.ts derives the AES-GCM
   * key from it). Development mode falls back to a fixed key; in production a missing or
   * short secret is null and connections are refused (501 not_implemented).
   */
  connectionsKey: string | null;
  /**
   * The bot challenge the page script runs before an anonymous write to an `antiAbuse`
   * collection (WIRE §4.4): Turnstile's public site key (`TURNSTILE_SITE_KEY`) and where
   * the page loads Turnstile's script from (`TURNSTILE_SCRIPT_URL`, Cloudflare's by
   * default). Null in production unless both the site key and `TURNSTILE_SECRET_KEY` are
   * set, and then a deploy may not declare `antiAbuse`; development mode falls back to
   * Cloudflare's invisible always-passing test key, whose dummy token it accepts.
   */
  turnstile: { siteKey: string; scriptUrl: string } | null;
  limits: Record<string, number>;
  flags: Record<string, boolean>;
  /** Delay before each retry of a failed webhook delivery (`WEBHOOKS_RETRY_SCHEDULE`); the last repeats. */
  webhookRetryDelaysMs: number[];
  /**
   * How long a recipient's notifications are held so a burst goes as one digest
   * (`NOTIFY_DIGEST_WINDOW_SECONDS`): a minute in production, seconds in development.
   */
  notifyDigestWindowMs: number;
  /**
   * Mail through an HTTP mail API instead of the `send_email` binding, for self-hosters
   * elsewhere: `MAIL_HTTP_URL` receives a JSON POST with `MAIL_HTTP_TOKEN` (a Worker
   * secret) as its bearer token. Null when the URL is not set.
   */
  mailHttp: { url: string; token: string | null } | null;
  /** Sniffed types an attachment may have (BLOB_MIME_ALLOWLIST, comma-separated). */
  blobMimeAllowlist: ReadonlySet<string>;
  /**
   * Custom domains (`CUSTOM_DOMAINS_TARGET`): the host name an owner's domain must point
   * to with a CNAME, where the operator's edge routes every such host to this Worker.
   * Unset in production: custom domains answer 501 `custom_domains_not_enabled`.
   * Development falls back to `domains.localhost` (`off` turns it off), and a request's
   * Host picks the domain.
   */
  customDomainsTarget: string | null;
  /**
   * The wait before a nacked agent task may be claimed again, doubled per attempt
   * (`AGENT_TASKS_RETRY_SECONDS`): 30 s in production, 1 s in development.
   */
  agentTaskRetryBaseMs: number;
  /**
   * The operator's OpenID Connect provider for "Sign in with <name>" (issue 14 item 7):
   * `IDP_ISSUER` (an https URL; plain http too in development mode, for a local stand-in),
   * `IDP_CLIENT_ID`, `IDP_CLIENT_SECRET` (a Worker secret), `IDP_SCOPES` (space-separated;
   * `openid email` always included) and `IDP_NAME` (the button's label; the issuer's host
   * by default). Null unless the issuer, client id and secret are all set and the issuer
   * is usable: `GET /v1/auth/idp` then answers 503 auth_provider_unavailable.
   */
  idp: IdpSettings | null;
}

export interface IdpSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated, `openid` and `email` first. */
  scopes: string;
  name: string;
}

type RawEnv = Record<string, unknown>;

const numberDefaults: Record<string, number> = {
  MAX_APPS_PER_ACCOUNT: 100, MAX_ROWS_PER_APP: 1000, MAX_STORAGE_BYTES_PER_APP: 52_428_800,
  MAX_COLLECTIONS_PER_APP: 50, MAX_EMBEDS: 50, MAX_EXTERNAL_HOSTS: 50, MAX_CONNECTIONS_PER_APP: 20,
  BATCH_MAX_ROWS: 100, MAX_ROW_DATA_BYTES: 65_536, MAX_DOCUMENT_ROW_DATA_BYTES: 262_144,
  MAX_DOCUMENT_BYTES: 2_097_152, MAX_MANIFEST_BYTES: 262_144, MAX_SCHEMA_BYTES: 65_536,
  MAX_APP_ASSETS: 50, MAX_BLOB_BYTES: 5_000_000, MAX_MEDIA_BLOB_BYTES: 50_000_000,
  MAX_ATTACHMENT_BYTES: 5_000_000, MAX_BLOBS_PER_APP_BYTES: 104_857_600,
  MAX_BLOBS_PER_ACCOUNT_BYTES: 5_368_709_120, MAX_TASTE_BYTES: 16_384, MAX_EVENT_DATA_BYTES: 65_536,
  MAX_ARTIFACT_BYTES: 5_242_880, FEED_PAGE_MAX: 1000, INGEST_MAX_BODY_BYTES: 65_536, INGEST_MAX_HOOKS: 10,
  INGEST_BACKFILL_MAX_BODIES: 500,
  // App import (docs/export-import.md): the largest archive POST /v1/apps/import reads.
  MAX_IMPORT_BYTES: 536_870_912,
  // Inbound hooks: deliveries an app accepts per hour (past it 429), how long and how many journal entries are kept.
  INGEST_APP_HOURLY_CAP: 1000, INGEST_DELIVERY_RETENTION_DAYS: 30, INGEST_DELIVERY_MAX_PER_APP: 1000,
  WEBHOOKS_MAX_ATTEMPTS: 8, WEBHOOKS_APP_HOURLY_CAP: 500,
  WEBHOOKS_DELIVERY_RETENTION_DAYS: 30, WEBHOOKS_DELIVERY_MAX_PER_APP: 1000,
  WEBHOOKS_FAILURE_NOTIFY_WINDOW_SECONDS: 3600, SCHEDULES_MAX_RULES: 10,
  SCHEDULES_MAX_EMAILS_PER_APP_DAY: 20, SCHEDULES_MAX_WEBHOOKS_PER_APP_DAY: 20,
  // Notification mails and pushes an app may send per hour (a digest counts once); how long notifications are kept.
  NOTIFY_APP_HOURLY_CAP: 200, NOTIFY_RETENTION_DAYS: 90,
  ANON_UPLOAD_MAX_BYTES: 5_000_000, ANON_BYTES_PER_APP: 50_000_000, ANON_UPLOADS_PER_IP_PER_APP_DAY: 20,
  // Agent tasks (WIRE §2.8, §5.5): the default lease (a rule's leaseSeconds overrides it) and the longest
  // extend-lease may ask for; claims before a task is dead-lettered; tasks an app may queue per hour; how long
  // a task without ttlSeconds stays claimable; how many days finished tasks are kept.
  AGENT_TASKS_LEASE_SECONDS: 120, AGENT_TASKS_MAX_LEASE_SECONDS: 3600, AGENT_TASKS_MAX_ATTEMPTS: 5,
  AGENT_TASKS_APP_HOURLY_CAP: 100, AGENT_TASKS_TTL_SECONDS: 604_800, AGENT_TASKS_RETENTION_DAYS: 30,
  // Mail to other people per owner per UTC day: invitations, member notices, transfer offers.
  INVITE_MAILS_PER_OWNER_DAY: 50,
  // Delegated access (spec B Limits): a longer ttl is clamped to these, never refused.
  CREDENTIAL_MAX_TTL_SECONDS: 63_072_000, CREDENTIAL_MAX_OVERLAP_SECONDS: 604_800, GRANT_MAX_TTL_SECONDS: 31_536_000,
};

const flagDefaults: Record<string, boolean> = {
  WEBHOOKS_ENABLED: true, SCHEDULES_ENABLED: true, NOTIFY_EXTERNAL_ENABLED: false,
  NOTIFY_INAPP_ENABLED: false, NOTIFY_PUSH_ENABLED: false, BLOB_ENCRYPT_AT_REST: false,
  // Whether agents may publish templates to this relay's community gallery (spec B community_publish_disabled).
  COMMUNITY_PUBLISH_ENABLED: true,
};

/** The effect gates of WIRE §5.5: on by default in development mode (issue: every engine tryable locally). */
const EFFECT_GATES = new Set(["WEBHOOKS_ENABLED", "SCHEDULES_ENABLED", "NOTIFY_EXTERNAL_ENABLED", "NOTIFY_INAPP_ENABLED", "NOTIFY_PUSH_ENABLED"]);

/**
 * Delays before each retry of a failed webhook delivery (after attempt 1, 2, …), as a
 * comma-separated list of durations (`5s`, `5m`, `2h`); the last repeats. The production
 * default keeps trying for about 27 hours over 8 attempts (Svix's schedule); development
 * retries within seconds (CONTRACT §3).
 */
const WEBHOOK_RETRY_DEFAULT = "5s,5m,30m,2h,5h,10h,10h";
const WEBHOOK_RETRY_DEVELOPMENT = "1s,2s,4s,8s,16s,32s,60s";

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `5s,5m,2h` → milliseconds; null when any part is unreadable or the list is empty. */
export function parseDurations(text: string): number[] | null {
  const parts = text.split(",").map((part) => part.trim());
  const delays = parts.map((part) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(part);
    return match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2]]) : Number.NaN;
  });
  return delays.length > 0 && delays.every((delay) => Number.isFinite(delay) && delay >= 0) ? delays : null;
}

function str(env: RawEnv, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function num(env: RawEnv, name: string, fallback: number): number {
  const parsed = Number(str(env, name));
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
}

/**
 * A per-IP limiter bucket (CONTRACT §3). A local relay is a test target whose clients all
 * share one address, so in development mode a bucket is off (0) unless its variable is
 * set; production falls back to the default. The defaults live here, not in
 * wrangler.toml, so that "set" always means someone chose the value.
 */
function addressLimit(env: RawEnv, name: string, productionDefault: number, development: boolean): number {
  if (str(env, name) === undefined && development) return 0;
  return num(env, name, productionDefault);
}

function flag(env: RawEnv, name: string, fallback: boolean): boolean {
  const value = str(env, name);
  return value === undefined ? fallback : value === "true" || value === "1";
}

function parseRegistrationMode(value: string | undefined, development: boolean): RegistrationMode {
  if (value === "open" || value === "secret" || value === "closed") return value;
  return development ? "open" : "closed";
}

/** Only ever used with RELAY_ENV=development: tokens signed with it are worthless elsewhere. */
const DEVELOPMENT_APP_SESSION_SECRET = "development-only app session key: never valid in production";

function appSessionSecret(env: RawEnv, development: boolean): string | null {
  const value = str(env, "APP_SESSION_SECRET");
  if (value !== undefined && value.length >= 32) return value;
  return development ? DEVELOPMENT_APP_SESSION_SECRET : null;
}

/** Only ever used with RELAY_ENV=development: what it seals is readable by anyone with the source. */
const DEVELOPMENT_CONNECTIONS_KEY = "development-only connections key: never protects anything in production";

function connectionsKey(env: RawEnv, development: boolean): string | null {
  const value = str(env, "CONNECTIONS_KEY");
  if (value !== undefined && value.length >= 32) return value;
  return development ? DEVELOPMENT_CONNECTIONS_KEY : null;
}

/** Where Turnstile's browser script lives (the page script adds `?render=explicit`). */
export const TURNSTILE_SCRIPT_DEFAULT = "https://challenges.cloudflare.com/turnstile/v0/api.js";
/** Cloudflare's documented test site key: always passes, invisible, hands out `XXXX.DUMMY.TOKEN.XXXX`. */
export const TURNSTILE_TEST_SITE_KEY = "1x00000000000000000000BB";

/** An https URL (plain http too in development mode, for a local stand-in), else Cloudflare's own. */
function turnstileScript(env: RawEnv, development: boolean): string {
  const value = str(env, "TURNSTILE_SCRIPT_URL");
  if (value === undefined) return TURNSTILE_SCRIPT_DEFAULT;
  try {
    const url = new URL(value);
    const allowed = url.protocol === "https:" || (development && url.protocol === "http:");
    if (allowed && !url.username && !url.password) return url.href;
  } catch {
    // fall through to the default
  }
  return TURNSTILE_SCRIPT_DEFAULT;
}

/** Production needs both halves (the page's site key, the relay's secret for siteverify); development has test keys. */
function turnstile(env: RawEnv, development: boolean): Config["turnstile"] {
  const siteKey = str(env, "TURNSTILE_SITE_KEY") ?? (development ? TURNSTILE_TEST_SITE_KEY : undefined);
  if (!development && str(env, "TURNSTILE_SECRET_KEY") === undefined) return null;
  return siteKey === undefined ? null : { siteKey, scriptUrl: turnstileScript(env, development) };
}

/** The attachment types allowed when BLOB_MIME_ALLOWLIST is not set (WIRE §2.9). */
const BLOB_MIME_DEFAULT = "image/png,image/jpeg,image/gif,image/webp,image/avif,image/svg+xml,audio/mpeg,audio/ogg,audio/wav,video/mp4,video/webm,application/pdf,text/plain,text/csv,application/json,application/zip";

function customDomainsTarget(env: RawEnv, development: boolean): string | null {
  const set = str(env, "CUSTOM_DOMAINS_TARGET")?.trim().toLowerCase();
  if (set === "off") return null;
  return set ?? (development ? "domains.localhost" : null);
}

/** The scopes every identity-provider sign-in asks for: an ID token, and the address in it. */
const IDP_REQUIRED_SCOPES = ["openid", "email"];

function idpSettings(env: RawEnv, development: boolean): IdpSettings | null {
  const issuer = str(env, "IDP_ISSUER");
  const clientId = str(env, "IDP_CLIENT_ID");
  const clientSecret = str(env, "IDP_CLIENT_SECRET");
  if (issuer === undefined || clientId === undefined || clientSecret === undefined) return null;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return null;
  }
  const allowed = url.protocol === "https:" || (development && url.protocol === "http:");
  if (!allowed || url.username || url.password || url.search || url.hash) return null;
  const asked = (str(env, "IDP_SCOPES") ?? "profile").split(/\s+/).filter(Boolean);
  const scopes = [...new Set([...IDP_REQUIRED_SCOPES, ...asked])].join(" ");
  return { issuer, clientId, clientSecret, scopes, name: str(env, "IDP_NAME") ?? url.host };
}

const cache = new WeakMap<object, Config>();

export function config(env: object): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  const raw = env as RawEnv;
  const development = str(raw, "RELAY_ENV") === "development";
  const built: Config = {
    development,
    apiOrigin: (str(raw, "API_ORIGIN") ?? "http://localhost:8787").replace(/\/+$/, ""),
    appsDomain: str(raw, "APPS_DOMAIN") ?? "localhost:8787",
    mailFrom: str(raw, "MAIL_FROM") ?? "relay@localhost",
    registrationMode: parseRegistrationMode(str(raw, "REGISTRATION_MODE"), development),
    registrationSecret: str(raw, "REGISTRATION_SECRET") ?? null,
    minCliVersion: str(raw, "MIN_CLI_VERSION") ?? null,
    operatorEmails: (str(raw, "COMMUNITY_REVIEW_OPERATOR_EMAILS") ?? "")
      .split(",").map((e) => e.trim().toLowerCase()).filter(Boolean),
    rateLimit: {
      windowSeconds: num(raw, "RATE_LIMIT_WINDOW_SECONDS", 60),
      register: addressLimit(raw, "RATE_LIMIT_REGISTER", 10, development),
      deviceCode: addressLimit(raw, "RATE_LIMIT_DEVICE_CODE", 10, development),
      deviceToken: addressLimit(raw, "RATE_LIMIT_DEVICE_TOKEN", 60, development),
      requestLink: addressLimit(raw, "RATE_LIMIT_REQUEST_LINK", 5, development),
      claim: addressLimit(raw, "RATE_LIMIT_CLAIM", 10, development),
      invite: addressLimit(raw, "RATE_LIMIT_INVITE", 20, development),
      pageWrite: addressLimit(raw, "RATE_LIMIT_PAGE_WRITE", 60, development),
      ingest: addressLimit(raw, "RATE_LIMIT_INGEST", 120, development),
    },
    maxJsonBodyBytes: num(raw, "MAX_JSON_BODY_BYTES", 1_048_576),
    maxDeployBodyBytes: num(raw, "MAX_DEPLOY_BODY_BYTES", 33_554_432),
    appSessionSecret: appSessionSecret(raw, development),
    connectionsKey: connectionsKey(raw, development),
    turnstile: turnstile(raw, development),
    limits: Object.fromEntries(Object.entries(numberDefaults).map(([k, d]) => [k, num(raw, k, d)])),
    flags: Object.fromEntries(Object.entries(flagDefaults).map(([k, d]) => [k, flag(raw, k, d || (development && EFFECT_GATES.has(k)))])),
    webhookRetryDelaysMs: parseDurations(str(raw, "WEBHOOKS_RETRY_SCHEDULE") ?? "")
      ?? parseDurations(development ? WEBHOOK_RETRY_DEVELOPMENT : WEBHOOK_RETRY_DEFAULT)!,
    notifyDigestWindowMs: num(raw, "NOTIFY_DIGEST_WINDOW_SECONDS", development ? 3 : 60) * 1000,
    agentTaskRetryBaseMs: num(raw, "AGENT_TASKS_RETRY_SECONDS", development ? 1 : 30) * 1000,
    mailHttp: str(raw, "MAIL_HTTP_URL") === undefined ? null : { url: str(raw, "MAIL_HTTP_URL")!, token: str(raw, "MAIL_HTTP_TOKEN") ?? null },
    blobMimeAllowlist: new Set((str(raw, "BLOB_MIME_ALLOWLIST") ?? BLOB_MIME_DEFAULT).split(",").map((m) => m.trim().toLowerCase()).filter(Boolean)),
    customDomainsTarget: customDomainsTarget(raw, development),
    idp: idpSettings(raw, development),
  };
  cache.set(env, built);
  return built;
}
