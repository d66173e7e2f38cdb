/**
 * `GET /_svc/sdk.<hash>.js`: the page script bundle. The hash is the bundle's own, so a
 * URL names exactly one version and can be cached forever; any other hash is 404 (an
 * old page asking for a bundle this relay no longer has gets a clear miss, not a
 * mismatched script).
 */
import type { Hono } from "hono";
import { RelayError } from "../../errors";
import { SDK_HASH, SDK_SOURCE } from "../../page-script/bundle.generated";
import type { ServeEnv } from "./context";

export function sdkRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/:file{sdk\\.[^/]+\\.js}", (c) => {
    if (c.req.param("file") !== `sdk.${SDK_HASH}.js`) {
      throw new RelayError("not_found", "No page script with that hash exists on this relay; reload the page.", { path: new URL(c.req.url).pathname });
    }
    return c.body(SDK_SOURCE, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
      "Cross-Origin-Resource-Policy": "same-origin",
    });
  });
}
