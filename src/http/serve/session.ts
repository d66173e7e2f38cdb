/**
 * `/_svc/session` on an app origin. GET tells the page who is looking (WIRE §4.3): the
 * owner or a member with an app session, or an anonymous visitor — on a public
 * or link app an anonymous caller gets 200 with kind "anonymous"; on a private app it
 * gets 401. A grant-link holder (`Authorization: Bearer grh_…`) is still kind
 * "anonymous" (WIRE §4.2) and gets 200 on any app, with `grant: { role, holderId }`
 * naming the link's role and this browser's holder id (the `id` of the rows it writes);
 * the field is absent for everyone else. A holder credential that no longer holds
 * answers 401 `grant_invalid`, so the page forgets it. POST trades a one-time grant from /authorize for an app-session token.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { displayName, getHuman } from "../../db/humans";
import { readJsonBody } from "../body";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import { appSessionFromGrant } from "../../auth/app-session";
import type { Viewer } from "../../auth/page-viewer";
import { signingKeys } from "../../auth/signing-keys";
import { presentedVisitorId, signVisitor } from "../../auth/visitor-token";
import { authorizeUrl } from "../../apps/urls";
import type { ServeContext, ServeEnv, ServedApp, ServedPolicy } from "./context";
import { requireKeys, viewerOf, canOpen } from "./viewer";
import { VISITOR_HEADER } from "./caller";
import { grantInvalid } from "../../apps/grant-links";

const MAX_SESSION_BODY_BYTES = 4096;
const grantBody = z.strictObject({ grant: z.string().min(1).max(200) });

export async function sessionBody(c: ServeContext, served: ServedApp, policy: ServedPolicy, viewer: Pick<Viewer, "kind" | "humanId"> & { grant?: Viewer["grant"] }, visitorId: string | null = null) {
  const human = viewer.humanId ? await getHuman(c.env, viewer.humanId) : undefined;
  return {
    kind: viewer.kind,
    humanId: viewer.humanId,
    visitorId: viewer.kind === "anonymous" ? visitorId : null,
    displayName: human ? displayName(human) : null,
    ...(viewer.grant ? { grant: { role: viewer.grant.role, holderId: viewer.grant.holderId } } : {}),
    app: {
      slug: served.slug,
      name: policy.app.name,
      description: policy.app.description,
      icon: policy.app.icon,
      visibility: served.app.visibility,
      collections: policy.collections,
    },
    visitorIdentity: visitorsMinted(served, policy),
    auth: { authorize_url: authorizeUrl(config(c.env), served.slug) },
  };
}

/** Whether this app gives anonymous browsers a visitor identity (WIRE §5.2). */
function visitorsMinted(served: ServedApp, policy: ServedPolicy): boolean {
  return policy.visitorIdentity && served.app.visibility !== "private";
}

function presentedVisitor(c: ServeContext, served: ServedApp, policy: ServedPolicy): Promise<string | null> {
  if (!visitorsMinted(served, policy)) return Promise.resolve(null);
  return presentedVisitorId(c.env, c.req.header(VISITOR_HEADER)?.trim(), served.app.id);
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
    if (viewer.rejected && viewer.kind === "anonymous" && !viewer.grant && /^Bearer\s+grh_/i.test(c.req.header("authorization") ?? "")) {
      throw grantInvalid("unknown");
    }
    if (viewer.rejected && viewer.kind === "anonymous" && c.req.header("authorization") !== undefined) {
      throw new RelayError("unauthorized", "The app session is expired, revoked or for another app; sign in again.");
    }
    if (served.app.visibility === "private" && viewer.kind === "anonymous" && !viewer.share && !viewer.grant) {
      throw new RelayError("unauthorized", "This app is private: sign in through /authorize to get an app session.",
        { authorize_url: authorizeUrl(config(c.env), served.slug) });
    }
    const visitorId = viewer.kind === "anonymous" ? await presentedVisitor(c, served, live.policy) : null;
    return noStore(c.json(await sessionBody(c, served, live.policy, viewer, visitorId)));
  });

  app.post("/_svc/visitor", async (c) => {
    const served = c.get("served");
    const live = await served.live();
    if (!visitorsMinted(served, live.policy)) {
      throw new RelayError("conflict", "This app does not give visitors an identity: its manifest has no collection that anyone may write and that scopes reads or edits to the writer, or the app is private.");
    }
    const viewer = await viewerOf(c, served);
    if (!canOpen(served, viewer)) throw new RelayError("unauthorized", "This share link is not valid (it may have been rotated).");
    const keys = signingKeys(c.env);
    if (!keys) throw new RelayError("auth_provider_unavailable", "Visitor identities are not set up on this relay yet: the operator must set APP_SESSION_SECRET.", { reason: "app_session_secret_missing" });
    const minted = await signVisitor(await keys, served.app.id);
    return noStore(c.json({ visitor_token: minted.token, visitor_id: minted.visitorId, expires_at: minted.expiresAt }, 201));
  });

  app.post("/_svc/session", async (c) => {
    const served = c.get("served");
    const live = await served.live();
    const keys = await requireKeys(c.env);
    const raw = await readJsonBody(c as unknown as AppContext, false, MAX_SESSION_BODY_BYTES);
    const { grant } = parseWith(grantBody, raw, "body");
    const { token, expiresAt, humanId, kind } = await appSessionFromGrant(c.env, keys, served.app, grant);
    const session = await sessionBody(c, served, live.policy, { kind, humanId });
    return noStore(c.json({ token, expires_at: expiresAt, session }));
  });
}
