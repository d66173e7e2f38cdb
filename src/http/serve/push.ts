/**
 * Browser push on an app origin, behind the page script's `push.enable()` and
 * `push.disable()` (WIRE §4.2): the page cannot reach the API origin's
 * `/v1/self/push-subscriptions` (it holds an app session, not the relay's cookie), so the
 * same save and delete are offered here for the signed-in viewer.
 *
 * | method | path | body | answer |
 * |---|---|---|---|
 * | GET | `/_svc/push` | | `{ public_key }`: the relay's VAPID key for `pushManager.subscribe` |
 * | POST | `/_svc/push/subscriptions` | `PushSubscription.toJSON()` | 201 (saved) or 200 (updated) `{ id, endpoint, expires_at, created_at, updated_at }` |
 * | DELETE | `/_svc/push/subscriptions` | `{ endpoint }` | 204, also when it was never saved |
 *
 * Push exists only where a notify rule could use it: a public app whose manifest sets
 * `offline: true`, on a relay with NOTIFY_PUSH_ENABLED; anywhere else every path answers
 * `push_not_available`. Subscriptions belong to people (spec B "Browser push"), so the
 * caller must be the owner or a member signed in to the app (or the owner's agent key,
 * which speaks for the owner); anyone else is `unauthorized`.
 */
import type { Hono } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { readJsonBody } from "../body";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import { publicVapidKey } from "../../account/vapid";
import { deleteSubscription, saveSubscription } from "../../account/push";
import { endpointBody, namedEndpoint, subscriptionBody, subscriptionInput } from "../../account/push-subscription-body";
import { assertSameOrigin, clientIp, credentialsFromHeaders, resolveCaller } from "./caller";
import type { ServeContext, ServeEnv } from "./context";
import { envelope } from "./errors";

/** The signed-in person asking, once this app can use push at all. */
async function subscriber(c: ServeContext): Promise<string> {
  const served = c.get("served");
  assertSameOrigin(c, served);
  const live = await served.live();
  if (served.app.visibility !== "public" || !live.policy.offline || !config(c.env).flags.NOTIFY_PUSH_ENABLED) {
    throw new RelayError("push_not_available", "Browser push needs a public app whose manifest sets offline: true (and a relay that enables push).",
      { visibility: served.app.visibility, offline: live.policy.offline });
  }
  const caller = await resolveCaller(c.env, served, live.policy, credentialsFromHeaders(c), clientIp(c));
  const humanId = caller.session.kind === "anonymous" ? null : caller.session.humanId;
  if (humanId === null) throw new RelayError("unauthorized", "Push notifications belong to people: sign in to this app to turn them on.");
  return humanId;
}

function noStore(res: Response): Response {
  res.headers.set("Cache-Control", "no-store");
  return res;
}

const METHODS: Record<string, string[]> = {
  "/_svc/push": ["GET", "HEAD"],
  "/_svc/push/subscriptions": ["POST", "DELETE"],
};

export function pushRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/push", async (c) => {
    await subscriber(c);
    return noStore(c.json({ public_key: await publicVapidKey(c.env) }));
  });

  app.post("/_svc/push/subscriptions", async (c) => {
    const humanId = await subscriber(c);
    const raw = await readJsonBody(c as unknown as AppContext, false, config(c.env).maxJsonBodyBytes);
    const saved = await saveSubscription(c.env, humanId, subscriptionInput(c.env, parseWith(subscriptionBody, raw, "body")));
    return noStore(c.json(saved.subscription, saved.created ? 201 : 200));
  });

  app.delete("/_svc/push/subscriptions", async (c) => {
    const humanId = await subscriber(c);
    const raw = await readJsonBody(c as unknown as AppContext, false, config(c.env).maxJsonBodyBytes);
    await deleteSubscription(c.env, humanId, namedEndpoint(parseWith(endpointBody, raw, "body").endpoint));
    return c.body(null, 204);
  });

  for (const [path, allow] of Object.entries(METHODS)) {
    app.all(path, (c) => envelope(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use ${allow.join(", ")}.`,
      { method: c.req.method, allow }, { Allow: allow.join(", ") })));
  }
}
