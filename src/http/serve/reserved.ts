/**
 * Paths the relay keeps for itself on every app origin (WIRE §4.3): `robots.txt`
 * (disallow everything unless a public app opted into indexing), `favicon.ico` (the
 * app's emoji icon on a public app, else the relay's default icon, so a browser's
 * automatic request never logs a 404), and `/.well-known/security.txt` and
 * `/sitemap.xml` answering 404 until those features exist. Under `/b/`, anything but a
 * capability URL's GET (serve/attachments.ts) is 404. An author can never deploy an
 * asset at any of them.
 */
import type { Hono } from "hono";
import type { ServeEnv } from "./context";
import { isIndexable } from "./context";
import { DEFAULT_ICON_SVG, iconSvg } from "./identity";
import { notFoundPage } from "./pages";

export function reservedRoutes(app: Hono<ServeEnv>): void {
  app.get("/robots.txt", async (c) => {
    const served = c.get("served");
    const { policy } = await served.live();
    const body = isIndexable(served, policy) ? "User-agent: *\nAllow: /\n" : "User-agent: *\nDisallow: /\n";
    return c.body(body, 200, {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "public, max-age=60",
      "X-Content-Type-Options": "nosniff",
    });
  });

  app.get("/favicon.ico", async (c) => {
    const served = c.get("served");
    const { policy } = await served.live();
    // Gated apps show nothing of themselves before the gate (their document carries the icon inline).
    const own = served.app.visibility === "public" && policy.app.icon ? policy.app.icon : null;
    return c.body(own ? iconSvg(own) : DEFAULT_ICON_SVG, 200, {
      "Content-Type": "image/svg+xml",
      "Cache-Control": "public, max-age=60",
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'",
    });
  });

  for (const path of ["/.well-known/security.txt", "/sitemap.xml"]) {
    app.get(path, () => notFoundPage());
  }
  app.all("/b/*", () => notFoundPage("There is no file at this address."));
  app.all("/b", () => notFoundPage("There is no file at this address."));
}
