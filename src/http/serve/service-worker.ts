/**
 * `GET /_svc/sw.js`: the relay's service worker for app pages, so a browser can show the
 * app's push notifications (WIRE §5.5 notify `push`; sent by src/effects/notify/push.ts).
 * It lives under the relay's reserved `_svc` prefix, so no author asset can take its
 * place, and `Service-Worker-Allowed: /` lets a page register it for the whole origin
 * (`register("/_svc/sw.js", { scope: "/" })`; without a scope it covers `/_svc/` only,
 * which is still enough to receive pushes).
 *
 * The worker is a fixed script, the same for every app: it handles `push` (shows the
 * payload's `title` and `body`, keeps its `link`, and replaces an earlier notification
 * with the same `tag`) and `notificationclick` (focuses a window of this app already at
 * the link, else opens it). A link is followed only when it is a path on the app's own
 * origin; anything else (another origin, a protocol-relative `//host`, a `javascript:`
 * URL) opens the app's front page instead. It caches nothing and never intercepts a
 * fetch. Its own CSP allows it to load and fetch nothing.
 */
import type { Hono } from "hono";
import type { ServeEnv } from "./context";

export const SERVICE_WORKER_PATH = "/_svc/sw.js";

export const SERVICE_WORKER_SOURCE = `// The relay's service worker: shows this app's push notifications and opens their link
// on this origin when one is clicked. It caches nothing and handles no fetch.
"use strict";

function ownPath(link) {
  if (typeof link !== "string" || !link.startsWith("/") || link.startsWith("//") || link.includes("\\\\")) return null;
  try {
    const url = new URL(link, self.location.origin);
    return url.origin === self.location.origin ? url.pathname + url.search + url.hash : null;
  } catch (err) {
    return null;
  }
}

function text(value) {
  return typeof value === "string" ? value : "";
}

self.addEventListener("install", () => {
  self.skipWaiting();
});

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = (event.data && event.data.json()) || {};
  } catch (err) {
    data = {};
  }
  const options = { body: text(data.body), data: { link: ownPath(data.link) } };
  if (text(data.tag)) options.tag = data.tag;
  event.waitUntil(self.registration.showNotification(text(data.title) || self.location.host, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const path = ownPath(event.notification.data && event.notification.data.link) || "/";
  const target = new URL(path, self.location.origin).href;
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
    const open = windows.find((client) => client.url === target);
    return open ? open.focus() : self.clients.openWindow(target);
  }));
});
`;

export function serviceWorkerRoutes(app: Hono<ServeEnv>): void {
  app.get(SERVICE_WORKER_PATH, (c) => c.body(SERVICE_WORKER_SOURCE, 200, {
    "Content-Type": "text/javascript; charset=utf-8",
    "Service-Worker-Allowed": "/",
    "Content-Security-Policy": "default-src 'none'",
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
  }));
}
