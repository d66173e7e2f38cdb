/**
 * The page script bundle (`/_svc/sdk.<hash>.js`, loaded with `defer`): it takes over the
 * `window.service` object the inline bootstrap created and fills it in place:
 * 1. finishes a sign-in hand-off (`#svc_grant=` from /authorize becomes an app-session
 *    token in localStorage), remembers a link's `#k=` share pass, and trades a grant
 *    link's `#g=` for a holder credential (WIRE §4.4, kept in localStorage; an app
 *    session, when the browser has one, is sent instead of it);
 * 2. asks `/_svc/session` who the viewer is (and, on a public or link app that gives
 *    visitors an identity, mints one at `POST /_svc/visitor` and keeps it);
 * 3. opens the feed socket (live.ts) and, once it said hello, snapshots every declared
 *    collection into the local mirror (store.ts);
 * 4. resolves `ready`.
 * Calls made before it arrived are replayed at once; network calls wait only for step 2.
 * An anonymous viewer's creates and upserts on `antiAbuse` collections carry a fresh bot-
 * challenge token (challenge.ts; Turnstile is loaded only when the first one is needed).
 * When framed it reports the document height to the parent (WIRE §4.2 "embed resize").
 */
import {
  GRANT_KEY, SESSION_KEY, SHARE_KEY, VISITOR_KEY, authorizeUrl, credentialHeaders, exchangeGrant, exchangeGrantLink, readStored, takeFragment, writeStored,
  type SessionInfo,
} from "./common";
import { Challenge } from "./challenge";
import { Live } from "./live";
import { Store, api } from "./store";
import { pushOf } from "./push";
import { blobsOf } from "./blobs";
import type {
  Author, BootstrappedService, BufferedCall, Connection, Internal, Member, NotificationPage, NotificationPreferences, ServiceConnections,
  RowTask, ServiceNotifications, ServiceSession, ServiceTasks,
} from "./types";

/** How long `ready` waits for the socket's hello before snapshotting without a cursor. */
const HELLO_WAIT_MS = 3000;

function adopt(): { service: BootstrappedService; internal: Internal } | null {
  const service = window.service;
  const internal = service?.__svc;
  if (!service || !internal || internal.attached) return null;
  internal.attached = true;
  return { service, internal };
}

async function fetchSession(): Promise<SessionInfo | null> {
  const headers = credentialHeaders();
  const res = await fetch("/_svc/session", { headers, credentials: "omit", cache: "no-store" });
  if (res.ok) return (await res.json()) as SessionInfo;
  if (res.status === 401 && headers.authorization) {
    // The stored app session expired or lost its access (or the grant link was revoked or
    // expired, `grant_invalid`): forget that credential and ask again without it.
    if (headers.authorization === `Bearer ${readStored(SESSION_KEY)}`) writeStored(SESSION_KEY, null);
    else writeStored(GRANT_KEY, null);
    return fetchSession();
  }
  return null;
}

function apply(session: ServiceSession, info: SessionInfo, service: BootstrappedService): void {
  session.kind = info.kind;
  session.humanId = info.humanId;
  session.visitorId = info.visitorId;
  session.displayName = info.displayName;
  const { collections, ...facts } = info.app;
  Object.assign(service.app, facts, { collections: (collections ?? []).map(({ name, appendOnly }) => ({ name, appendOnly })) });
}

/** A visitor identity for this browser on this app (WIRE §5.2), kept in localStorage. */
async function mintVisitor(): Promise<string | null> {
  try {
    const minted = await api<{ visitor_token: string; visitor_id: string }>("POST", "/_svc/visitor");
    writeStored(VISITOR_KEY, minted.visitor_token);
    return minted.visitor_id;
  } catch (err) {
    console.warn("service: could not get a visitor identity; writing anonymously.", err);
    return null;
  }
}

/**
 * Runs the calls queued before the bundle attached; from then on the queue runs whatever
 * is pushed at once, so a bootstrap method a page kept a reference to still works.
 */
function replay(service: BootstrappedService, internal: Internal): void {
  const run = (call: BufferedCall) => {
    if (call.x) return;
    const path = call.n.split(".");
    const method = path.pop()!;
    try {
      // The member path names an object inside the service (`notifications.preferences`) and the method on it.
      const target = path.reduce((at, name) => at[name] as Record<string, unknown>, service as unknown as Record<string, unknown>);
      const result = (target[method] as (...a: unknown[]) => unknown)(...call.a);
      if (call.ok) Promise.resolve(result).then(call.ok, call.no);
      else if (typeof result === "function") call.off = result as () => void;
    } catch (err) {
      call.no?.(err);
    }
  };
  for (const call of internal.queue.splice(0)) run(call);
  internal.queue.push = (...calls: BufferedCall[]) => {
    calls.forEach(run);
    return 0;
  };
}

function reportHeight(): void {
  if (window.parent === window) return;
  let last = -1;
  const post = () => {
    const height = Math.ceil(document.documentElement.scrollHeight);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: "service:resize", height }, "*");
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(post).observe(document.documentElement);
  window.addEventListener("load", post);
  post();
}

function membersOf(session: ServiceSession, credentials: Promise<void>) {
  const names = new Map<string, string>();
  return {
    list: async (): Promise<Member[]> => {
      await credentials;
      const { members } = await api<{ members: Member[] }>("GET", "/_svc/members");
      for (const m of members) names.set(`${m.kind}:${m.id}`, m.displayName);
      return members;
    },
    nameFor: (author: Author | null | undefined): string => {
      const kind = author?.kind;
      const known = author ? names.get(`${kind}:${author.id}`) : undefined;
      if (known) return known;
      if (kind === "human") return author!.id === session.humanId && session.displayName ? session.displayName : "a member";
      return kind === "agent" ? "an agent" : "a visitor";
    },
  };
}

/** `connections.set` / `connections.status`: the owner's (or owner's agent's) only; anyone else is refused `connection_status_forbidden`. */
function connectionsOf(credentials: Promise<void>): ServiceConnections {
  type Answer = { connection: Omit<Connection, "authorizeUrl">; authorizeUrl: string | null };
  const path = (name: string) => `/_svc/connections/${encodeURIComponent(name)}`;
  const flat = ({ connection, authorizeUrl }: Answer): Connection => ({ ...connection, authorizeUrl });
  return {
    set: async (name, settings) => {
      await credentials;
      return flat(await api<Answer>("PUT", path(name), settings));
    },
    status: async (name) => {
      await credentials;
      return flat(await api<Answer>("GET", path(name)));
    },
  };
}

/** The viewer's in-app notifications and per-channel mutes (`/_svc/notifications…`). */
function notificationsOf(credentials: Promise<void>): ServiceNotifications {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    await credentials;
    return api<T>(method, `/_svc/notifications${path}`, body);
  };
  return {
    list: (options = {}) => {
      const query = new URLSearchParams();
      if (options.limit !== undefined) query.set("limit", String(options.limit));
      if (options.unread) query.set("unread", "true");
      if (options.before !== undefined) query.set("before", options.before);
      const search = query.toString();
      return call<NotificationPage>("GET", search ? `?${search}` : "");
    },
    count: async () => (await call<{ count: number }>("GET", "/count")).count,
    markRead: async (ids) => (await call<{ marked: number }>("POST", "/read", ids === undefined ? undefined : { ids })).marked,
    preferences: {
      get: () => call<NotificationPreferences | null>("GET", "/preferences"),
      set: (input) => call<NotificationPreferences>("PUT", "/preferences", input),
    },
  };
}

/** A row's agent tasks (`/_svc/tasks`). */
function tasksOf(credentials: Promise<void>): ServiceTasks {
  return {
    forRow: async (collection, key) => {
      await credentials;
      const query = new URLSearchParams({ collection, row: key });
      return (await api<{ tasks: RowTask[] }>("GET", `/_svc/tasks?${query.toString()}`)).tasks;
    },
  };
}

async function start(): Promise<void> {
  const adopted = adopt();
  if (!adopted) return;
  const { service, internal } = adopted;
  const { session } = service;

  let credentialsKnown: () => void = () => undefined;
  const credentials = new Promise<void>((r) => {
    credentialsKnown = r;
  });
  const challenge = internal.config.challenge ? new Challenge(internal.config.challenge) : null;
  // Owners and members are never challenged; visitors and grant-link holders are anonymous.
  const store = new Store(credentials, async (name) =>
    (challenge && session.kind === "anonymous" && challenge.guards(name) ? challenge.token() : null));
  const members = membersOf(session, credentials);

  session.login = () => {
    window.location.assign(authorizeUrl(internal.config.authorize, service.app.slug || internal.config.slug));
  };
  session.logout = () => {
    writeStored(SESSION_KEY, null);
    window.location.reload();
  };
  Object.assign(service.collections, store.collections());
  const feed = store.feed();
  Object.defineProperty(service.feed, "cursor", { get: () => feed.cursor, enumerable: true, configurable: true });
  service.feed.on = feed.on;
  Object.assign(service.members, members);
  Object.assign(service.connections, connectionsOf(credentials));
  Object.assign(service.notifications, notificationsOf(credentials));
  Object.assign(service.push, pushOf(credentials));
  Object.assign(service.tasks, tasksOf(credentials));
  Object.assign(service, blobsOf(credentials));
  replay(service, internal);
  reportHeight();

  const fragment = takeFragment(["svc_grant", "k", "g"]);
  if (fragment.k) writeStored(SHARE_KEY, fragment.k);
  let info: SessionInfo | null = null;
  try {
    if (fragment.svc_grant) {
      try {
        await exchangeGrant(fragment.svc_grant);
      } catch (err) {
        console.warn("service: the sign-in hand-off could not be completed; continuing as before.", err);
      }
    }
    if (fragment.g) {
      try {
        await exchangeGrantLink(fragment.g);
      } catch (err) {
        console.warn("service: the grant link could not be used; continuing as before.", err);
      }
    }
    info = await fetchSession();
    if (info) {
      apply(session, info, service);
      if (info.kind === "anonymous" && info.visitorIdentity && !info.visitorId) session.visitorId = await mintVisitor();
      store.declare(info.app.collections ?? []);
    }
  } catch (err) {
    console.warn("service: could not reach /_svc/session; the session stays anonymous.", err);
  } finally {
    credentialsKnown();
  }

  try {
    if (info) {
      const live = new Live(store);
      live.start();
      await live.helloOrGiveUp(HELLO_WAIT_MS);
      await store.sync();
      if (info.kind !== "anonymous") members.list().catch(() => undefined);
    }
  } catch (err) {
    console.warn("service: the local mirror could not be filled.", err);
  } finally {
    internal.resolve();
  }
}

/**
 * A new share link or sign-in hand-off opened in this tab changes only the fragment:
 * take it in and reload, so the page starts again with the new credential.
 */
function watchFragment(): void {
  window.addEventListener("hashchange", () => {
    const fragment = takeFragment(["svc_grant", "k", "g"]);
    if (fragment.k) writeStored(SHARE_KEY, fragment.k);
    const grant = fragment.svc_grant;
    if (grant) {
      exchangeGrant(grant).catch((err) => console.warn("service: the sign-in hand-off could not be completed.", err))
        .finally(() => window.location.reload());
    } else if (fragment.g) {
      exchangeGrantLink(fragment.g).catch((err) => console.warn("service: the grant link could not be used.", err))
        .finally(() => window.location.reload());
    } else if (fragment.k) {
      window.location.reload();
    }
  });
}

void start();
watchFragment();
