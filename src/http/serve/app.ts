/**
 * The Hono app answering every app origin (`<slug>.<APPS_DOMAIN>`). It resolves the app
 * the host names once per request, then routes: `/_svc/*` (the page's own API: session,
 * page script, service worker), reserved paths, the document at `/` and `/index.html`,
 * and assets at their relative paths. App origins never see cookies: nothing here reads
 * the inbound Cookie header (the API session cookie belongs to another origin anyway),
 * and any Set-Cookie is stripped from every response.
 */
import { Hono } from "hono";
import { relayRouter } from "../router";
import { RelayError } from "../../errors";
import { resolveServedApp, ServeRefusal, type ServeEnv } from "./context";
import { serveDocument } from "./document";
import { envelope, isSvcPath, renderServeError } from "./errors";
import { servedSlug } from "./host";
import { methodNotAllowedPage, notFoundPage } from "./pages";
import { reservedRoutes } from "./reserved";
import { sdkRoutes } from "./sdk";
import { serviceWorkerRoutes } from "./service-worker";
import { sessionRoutes } from "./session";
import { socketRoutes } from "./socket";
import { dataRoutes } from "./data";
import { connectionRoutes } from "./connections";
import { notificationRoutes } from "./notifications";
import { pushRoutes } from "./push";
import { taskRoutes } from "./tasks";
import { rowWriteActivity } from "../../apps/activity";
import { grantExchangeRoutes } from "./grant-exchange";
import { serveAsset } from "./assets";
import { attachmentPageRoutes } from "./attachments";

export function buildServeApp(): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>({ router: relayRouter() });

  app.use("*", async (c, next) => {
    await next();
    if (c.res.headers.has("set-cookie")) {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.delete("set-cookie");
    }
  });

  app.use("*", async (c, next) => {
    const slug = servedSlug(c.req.url, c.env);
    if (!slug) throw new ServeRefusal("not_found", "There is no app at this address.");
    // The feed socket still reaches a suspended app, to tell its watchers `_suspended`.
    c.set("served", await resolveServedApp(c.env, slug, { allowSuspended: new URL(c.req.url).pathname === "/_svc/ws" }));
    await next();
  });

  app.use("/_svc/c/*", rowWriteActivity<ServeEnv>((c) => c.get("served").app.id));
  sessionRoutes(app);
  grantExchangeRoutes(app);
  sdkRoutes(app);
  serviceWorkerRoutes(app);
  socketRoutes(app);
  dataRoutes(app);
  connectionRoutes(app);
  notificationRoutes(app);
  pushRoutes(app);
  taskRoutes(app);
  attachmentPageRoutes(app);
  app.on(["GET", "PUT", "PATCH", "DELETE", "OPTIONS"], "/_svc/visitor", (c) => envelope(c, new RelayError("method_not_allowed",
    `${c.req.method} is not supported on /_svc/visitor; use POST.`, { method: c.req.method, allow: ["POST"] }, { Allow: "POST" })));
  app.on(["PUT", "PATCH", "DELETE", "OPTIONS"], "/_svc/session", (c) => envelope(c, new RelayError("method_not_allowed",
    `${c.req.method} is not supported on /_svc/session; use GET, POST.`, { method: c.req.method, allow: ["GET", "HEAD", "POST"] }, { Allow: "GET, HEAD, POST" })));
  app.all("/_svc/*", (c) => envelope(c, new RelayError("not_found", `Nothing exists at ${new URL(c.req.url).pathname}.`, { path: new URL(c.req.url).pathname })));

  reservedRoutes(app);
  app.get("/", serveDocument);
  app.get("/index.html", serveDocument);
  app.get("*", serveAsset);
  app.all("*", (c) => methodNotAllowedPage(c.req.method, ["GET", "HEAD"]));

  app.notFound((c) => (isSvcPath(c.req.url)
    ? envelope(c, new RelayError("not_found", `Nothing exists at ${new URL(c.req.url).pathname}.`))
    : notFoundPage()));
  app.onError((err, c) => renderServeError(c, err));
  return app;
}
