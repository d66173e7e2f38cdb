/**
 * `POST /_svc/grant` on an app origin: the page trades the token from a grant link's
 * `#g=` fragment for a per-holder credential (`grh_…`) and keeps it in localStorage
 * (WIRE §4.4). Body `{ grant: "gr_…" }`; a browser that still holds a credential of the
 * same link presents it as `Authorization: Bearer grh_…` and gets it back without
 * spending a use. A once link is claimed by the first browser; a multi link admits new
 * holders up to `max_uses`. Every token that does not hold — unknown or forged, another
 * app's, revoked, expired, spent — answers 401 `grant_invalid` and mints nothing.
 *
 * The holder then presents `Authorization: Bearer grh_…` on the app's data paths, which
 * turn it into a permission principal with `grantPrincipalFor` (src/auth/grant-holder.ts).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { exchangeGrant } from "../../apps/grant-links";
import { bearerOf } from "../../auth/bearer";
import { readJsonBody } from "../body";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import type { ServeEnv } from "./context";
import { envelope } from "./errors";

const MAX_GRANT_BODY_BYTES = 4096;
const body = z.strictObject({ grant: z.string().min(1).max(200) });

export function grantExchangeRoutes(app: Hono<ServeEnv>): void {
  app.post("/_svc/grant", async (c) => {
    const served = c.get("served");
    const origin = c.req.header("origin");
    if (origin !== undefined && origin !== served.origin) {
      throw new RelayError("forbidden", "Grant links are exchanged only by pages on the app's own origin.", { origin: origin.slice(0, 200) });
    }
    const raw = await readJsonBody(c as unknown as AppContext, false, MAX_GRANT_BODY_BYTES);
    const { grant } = parseWith(body, raw, "body");
    const remembered = bearerOf(c.req.header("authorization")) ?? null;
    const result = await exchangeGrant(c.env, served.app, grant.trim(), remembered);
    const res = c.json(result);
    res.headers.set("Cache-Control", "no-store");
    return res;
  });
  app.on(["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"], "/_svc/grant", (c) => envelope(c, new RelayError("method_not_allowed",
    `${c.req.method} is not supported on /_svc/grant; use POST.`, { method: c.req.method, allow: ["POST"] }, { Allow: "POST" })));
}
