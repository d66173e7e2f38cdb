/**
 * The page script bundle (`/_svc/sdk.<hash>.js`, loaded with `defer`): it takes over the
 * `window.service` object the inline bootstrap created, finishes a sign-in hand-off
 * (`#svc_grant=` from /authorize becomes an app-session token in localStorage), asks
 * `/_svc/session` who the viewer is, fills `session` and `app` in place, resolves `ready`
 * and replays calls buffered before it arrived. When framed it reports the document
 * height to the parent (WIRE §4.2 "embed resize"). Data members come later.
 */
import { SESSION_KEY, SHARE_KEY, authorizeUrl, credentialHeaders, exchangeGrant, takeFragment, writeStored, type SessionInfo } from "./common";
import type { BootstrappedService, Internal, ServiceSession } from "./types";

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
    // The stored app session expired or lost its access: forget it and ask again as a visitor.
    writeStored(SESSION_KEY, null);
    return fetchSession();
  }
  return null;
}

function apply(session: ServiceSession, info: SessionInfo, service: BootstrappedService): void {
  session.kind = info.kind;
  session.humanId = info.humanId;
  session.visitorId = info.visitorId;
  session.displayName = info.displayName;
  Object.assign(service.app, info.app);
}

function replay(service: BootstrappedService, internal: Internal): void {
  const calls = internal.queue.splice(0);
  for (const [name, args] of calls) {
    if (name === "session.login") service.session.login(...(args as []));
    else if (name === "session.logout") service.session.logout(...(args as []));
  }
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

async function start(): Promise<void> {
  const adopted = adopt();
  if (!adopted) return;
  const { service, internal } = adopted;
  const { session } = service;

  session.login = () => {
    window.location.assign(authorizeUrl(internal.config.authorize, service.app.slug || internal.config.slug));
  };
  session.logout = () => {
    writeStored(SESSION_KEY, null);
    window.location.reload();
  };
  replay(service, internal);
  reportHeight();

  const fragment = takeFragment(["svc_grant", "k"]);
  if (fragment.k) writeStored(SHARE_KEY, fragment.k);
  try {
    if (fragment.svc_grant) {
      try {
        await exchangeGrant(fragment.svc_grant);
      } catch (err) {
        console.warn("service: the sign-in hand-off could not be completed; continuing as before.", err);
      }
    }
    const info = await fetchSession();
    if (info) apply(session, info, service);
  } catch (err) {
    console.warn("service: could not reach /_svc/session; the session stays anonymous.", err);
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
    const fragment = takeFragment(["svc_grant", "k"]);
    if (fragment.k) writeStored(SHARE_KEY, fragment.k);
    const grant = fragment.svc_grant;
    if (grant) {
      exchangeGrant(grant).catch((err) => console.warn("service: the sign-in hand-off could not be completed.", err))
        .finally(() => window.location.reload());
    } else if (fragment.k) {
      window.location.reload();
    }
  });
}

void start();
watchFragment();
