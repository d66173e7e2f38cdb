/**
 * The per-request state of an app-origin request: which app the Host names (looked up
 * once), its live version and the policy compiled from that version's manifest (loaded
 * lazily: the SDK route needs neither). Lifecycle gates live here too: an unknown slug,
 * a deleted or purged app, or one without a live version is "not found"; a suspended
 * app is refused. Handlers only ever see an app that may be served. An unrestricted
 * private app's live policy opens connect-src to the internet.
 */
import type { Context } from "hono";
import { config, type Config } from "../../config";
import { findAppBySlug, getVersion, type AppRow, type AppVersionRow, type AssetEntry } from "../../db/apps";
import { compileLive } from "../../apps/deploy";
import { BoundedMap } from "../../bounded-map";
import { appUrl } from "../../apps/urls";
import { unrestrictedState } from "../../apps/unrestricted";
import { buildCsp } from "../../manifest/origins";
import type { AppIdentity, CspSources, NotifyChannel } from "../../manifest/types";
import type { AppEnv } from "../types";

/** What serving needs from the compiled manifest. */
export interface ServedPolicy {
  app: AppIdentity;
  csp: CspSources;
  /** embedAncestors take effect only on a public app that needs no visitor identity (WIRE §5.1). */
  visitorIdentity: boolean;
  /** Declared collections, for the page script (what to mirror) and the socket's hello. */
  collections: PageCollection[];
  /**
   * The bot challenge the page runs before an anonymous create or upsert (WIRE §4.4): set
   * only when some collection has `antiAbuse` and the relay has a Turnstile site key. It
   * goes into the page script's boot config and opens the CSP to the script's origin.
   */
  challenge: PageChallenge | null;
  /** Every channel the app's notify rules use (`/_svc/notifications` exists only with `inapp`). */
  notifyChannels: NotifyChannel[];
  /** The manifest's `offline: true`: browser push (`/_svc/push`) needs it on a public app. */
  offline: boolean;
}

export interface PageChallenge {
  siteKey: string;
  /** Turnstile's script URL (TURNSTILE_SCRIPT_URL). */
  script: string;
  /** The `antiAbuse` collections, in manifest order. */
  collections: string[];
}

export interface PageCollection {
  name: string;
  appendOnly: boolean;
  mirror: "auto" | "eager" | "server";
}

export interface LiveApp {
  version: AppVersionRow;
  policy: ServedPolicy;
  assets: AssetEntry[];
}

export interface ServedApp {
  slug: string;
  app: AppRow;
  /** `<scheme>://<slug>.<APPS_DOMAIN>/` */
  root: string;
  origin: string;
  /**
   * When the relay began reading this request's access from D1 (ms since the epoch): a
   * withdrawal the store recorded at or after it may not have been seen by those reads.
   */
  checkedAt: number;
  live(): Promise<LiveApp>;
}

export interface ServeEnv {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { served: ServedApp };
}

export type ServeContext = Context<ServeEnv>;

/** Why an app-origin request cannot be served; rendered as a page or an envelope. */
export class ServeRefusal extends Error {
  constructor(readonly reason: "not_found" | "suspended" | "unconfigured" | "unavailable", message: string) {
    super(message);
  }
}

function parseAssets(json: string): AssetEntry[] {
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? (list as AssetEntry[]).filter((a) => a && typeof a.path === "string" && typeof a.sha256 === "string") : [];
  } catch {
    return [];
  }
}

/** A policy for a manifest that no longer compiles: nothing beyond 'self', no powers. */
function fallbackPolicy(app: AppRow): ServedPolicy {
  return {
    app: { name: app.slug, description: null, icon: null, indexable: false, ogImage: null },
    csp: buildCsp([], [], [], false, []),
    visitorIdentity: false,
    collections: [],
    challenge: null,
    notifyChannels: [],
    offline: false,
  };
}

/** The challenge an app's pages run, or null (no `antiAbuse` collection, or no Turnstile on this relay). */
export function pageChallenge(cfg: Config, collections: Array<{ name: string; antiAbuse: string | null }>): PageChallenge | null {
  const guarded = collections.filter((col) => col.antiAbuse !== null).map((col) => col.name);
  if (guarded.length === 0 || !cfg.turnstile) return null;
  return { siteKey: cfg.turnstile.siteKey, script: cfg.turnstile.scriptUrl, collections: guarded };
}

/**
 * Compiled policies by (app, version, visibility, timezone, the relay's challenge
 * settings): versions are immutable, so a policy never goes stale; the map is bounded so
 * an isolate serving many apps stays small.
 */
const POLICY_CACHE_MAX = 200;
const policyCache = new BoundedMap<string, ServedPolicy>(POLICY_CACHE_MAX);

function policyFor(env: Env, app: AppRow, version: AppVersionRow): ServedPolicy {
  const cfg = config(env);
  const challengeKey = cfg.turnstile ? `${cfg.turnstile.siteKey} ${cfg.turnstile.scriptUrl}` : "";
  const key = `${app.id}:${version.version}:${app.visibility}:${app.timezone ?? ""}:${challengeKey}`;
  const hit = policyCache.get(key);
  if (hit) return hit;
  const compiled = compileLive({ app, version }, cfg);
  const policy = compiled
    ? {
      app: compiled.app, csp: compiled.csp, visitorIdentity: compiled.visitorIdentity,
      collections: Object.values(compiled.collections).map((col) => ({ name: col.name, appendOnly: col.appendOnly, mirror: col.mirror })),
      challenge: pageChallenge(cfg, Object.values(compiled.collections)),
      notifyChannels: [...new Set(compiled.notify.flatMap((rule) => rule.channels))],
      offline: compiled.offline,
    }
    : fallbackPolicy(app);
  policyCache.set(key, policy);
  return policy;
}

/**
 * `allowSuspended`: the feed socket still resolves a suspended app, so that a watcher can
 * be told `_suspended` (WIRE §3.1) instead of failing to connect.
 */
export async function resolveServedApp(env: Env, slug: string, opts: { allowSuspended?: boolean } = {}): Promise<ServedApp> {
  const checkedAt = Date.now();
  const app = await findAppBySlug(env, slug);
  if (!app || app.status === "deleted" || app.currentVersion === null) {
    throw new ServeRefusal("not_found", "There is no app at this address.");
  }
  if (app.status === "suspended" && !opts.allowSuspended) throw new ServeRefusal("suspended", "This app is suspended by the relay's operator.");
  const root = appUrl(config(env), app.slug);
  let live: Promise<LiveApp> | undefined;
  return {
    slug: app.slug,
    app,
    root,
    origin: new URL(root).origin,
    checkedAt,
    live: () => {
      live ??= (async () => {
        // Only a private app can be unrestricted, so no other app pays for the lookup.
        const [version, unrestricted] = await Promise.all([
          getVersion(env, app.id, app.currentVersion!),
          app.visibility === "private" ? unrestrictedState(env, app.id).then((state) => state.unrestricted) : false,
        ]);
        if (!version) throw new ServeRefusal("not_found", "There is no app at this address.");
        const policy = policyFor(env, app, version);
        return { version, policy: unrestricted ? openToInternet(policy) : policy, assets: parseAssets(version.assetsJson) };
      })();
      return live;
    },
  };
}

/** An unrestricted app's policy: its page may connect to any https or wss origin (src/apps/unrestricted.ts). */
function openToInternet(policy: ServedPolicy): ServedPolicy {
  return { ...policy, csp: { ...policy.csp, connectSrc: [...policy.csp.connectSrc, "https:", "wss:"] } };
}

export function isIndexable(served: ServedApp, policy: ServedPolicy): boolean {
  return served.app.visibility === "public" && policy.app.indexable;
}
