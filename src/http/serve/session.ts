/**
 * `/_svc/session` on an app origin. GET tells the page who is looking (WIRE §4.3): the
 * owner or a member with an app session, or an anonymous visitor — on a public
 * or link app an anonymous caller gets 200 with kind "anonymous"; on a private app it
 * gets 401. POST trades a one-time grant from /authorize for an app-session token.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { displayName, getHuman } from "../../db/humans";
import { readJsonBody } from "../body";
import { parseWith } from "../routes";
import type { AppContext } from "../types";
import { appAccessFor } from "./access";
import type { ServeContext, ServeEnv, ServedApp, ServedPolicy } from "./context";
import { consumeGrant } from "./grants";
import { signAppSession } from "./tokens";
import { requireKeys, viewerOf, type Viewer } from "./viewer";

const MAX_SESSION_BODY_BYTES = 4096;
const grantBody = z.strictObject({ grant: z.string().min(1).max(200) });

export async function sessionBody(c: ServeContext, served: ServedApp, policy: ServedPolicy, viewer: Pick<Viewer, "kind" | "humanId">) {
  const human = viewer.humanId ? await getHuman(c.env, viewer.humanId) : undefined;
  return {
    kind: viewer.kind,
    humanId: viewer.humanId,
    visitorId: null,
    displayName: human ? displayName(human) : null,
    app: {
      slug: served.slug,
      name: policy.app.name,
      description: policy.app.description,
      icon: policy.app.icon,
      visibility: served.app.visibility,
    },
    auth: { authorize_url: `${config(c.env).apiOrigin}/authorize?app=${encodeURIComponent(served.slug)}` },
  };
}

function noStore(res: Response): Response {
  res.headers.set("Cache-Control", "no-store");
  return res;
}

export function sessionRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/session", async (c) => {
    const served = c.get("served");
    const live = await served.live();
    const viewer = await viewerOf(c, served);
    if (viewer.rejected && viewer.kind === "anonymous" && c.req.header("authorization") !== undefined) {
      throw new RelayError("unauthorized", "The app session is expired, revoked or for another app; sign in again.");
    }
    if (served.app.visibility === "private" && viewer.kind === "anonymous") {
      throw new RelayError("unauthorized", "This app is private: sign in through /authorize to get an app session.",
        { authorize_url: `${config(c.env).apiOrigin}/authorize?app=${encodeURIComponent(served.slug)}` });
    }
    return noStore(c.json(await sessionBody(c, served, live.policy, viewer)));
  });

  app.post("/_svc/session", async (c) => {
    const served = c.get("served");
    const live = await served.live();
    const keys = await requireKeys(c.env);
    const raw = await readJsonBody(c as unknown as AppContext, false, MAX_SESSION_BODY_BYTES);
    const { grant } = parseWith(grantBody, raw, "body");
    const spent = await consumeGrant(c.env, grant, served.app.id);
    if (!spent) throw new RelayError("grant_invalid", "This sign-in grant is unknown, already used, expired or for another app; sign in again.");
    const access = await appAccessFor(c.env, served.app, spent.humanId);
    if (!access) throw new RelayError("forbidden", "This account no longer has access to this app.");
    const { token, expiresAt } = await signAppSession(keys, served.app.id, spent.humanId, access.kind);
    const session = await sessionBody(c, served, live.policy, { kind: access.kind, humanId: spent.humanId });
    return noStore(c.json({ token, expires_at: expiresAt, session }));
  });
}
