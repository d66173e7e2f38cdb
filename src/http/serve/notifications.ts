/**
 * The viewer's notifications on an app origin: the in-app inbox (WIRE §4.3) and the
 * per-channel mutes behind `notifications.preferences` (WIRE §4.2).
 *
 * | method | path | body | answer |
 * |---|---|---|---|
 * | GET | `/_svc/notifications` | query `limit` (1..100, default 50), `unread=true`, `before=<id>` | `{ notifications: [...], has_more }`, newest first |
 * | GET | `/_svc/notifications/count` | | `{ count }` of the unread |
 * | POST | `/_svc/notifications/read` | `{ ids: [...] }`, or no body for all | `{ marked }` |
 * | GET | `/_svc/notifications/preferences` | | `null` (no notify rule), or `{ notifiable, muted: { <channel>: boolean } }` |
 * | PUT | `/_svc/notifications/preferences` | `{ channel, muted }` | the preferences as GET answers them |
 *
 * Items carry `id`, `subject`, `body`, `link`, `collection_name`, `row_key`, `op`,
 * `created_at` and `read_at`. The inbox paths exist only when the app declares the
 * `inapp` channel (else 404 `not_found`). The caller is resolved like every page data
 * path (src/auth/page-caller.ts); notifications belong to people, so the inbox and
 * changing a mute need the owner's or a member's app session (or the owner's agent key,
 * which speaks for the owner): anyone else is `unauthorized`, and their preferences read
 * `notifiable: false`.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { readJsonBody } from "../body";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import { listInbox, markRead, mutedChannels, setMuted, unreadCount } from "../../effects/notify/inbox";
import { assertSameOrigin, clientIp, credentialsFromHeaders, resolveCaller } from "./caller";
import type { ServeContext, ServeEnv } from "./context";
import { envelope } from "./errors";

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  unread: z.enum(["true", "false"]).optional(),
  before: z.string().min(1).max(100).optional(),
});
const readBody = z.strictObject({ ids: z.array(z.string().min(1).max(100)).min(1).max(100) });
const preferenceBody = z.strictObject({ channel: z.enum(["email", "inapp", "push"]), muted: z.boolean() });

/** The served app, its declared notify channels, and the person calling (null: nobody with an inbox). */
async function viewer(c: ServeContext) {
  const served = c.get("served");
  assertSameOrigin(c, served);
  const live = await served.live();
  const caller = await resolveCaller(c.env, served, live.policy, credentialsFromHeaders(c), clientIp(c));
  return { appId: served.app.id, channels: live.policy.notifyChannels, humanId: caller.session.kind === "anonymous" ? null : caller.session.humanId };
}

function signedIn(humanId: string | null): string {
  if (humanId === null) throw new RelayError("unauthorized", "Notifications belong to people: sign in to this app to see yours.");
  return humanId;
}

/** The inbox's caller, once the app declares in-app notifications. */
async function inboxOwner(c: ServeContext): Promise<{ appId: string; humanId: string }> {
  const v = await viewer(c);
  if (!v.channels.includes("inapp")) throw new RelayError("not_found", "This app sends no in-app notifications.", { path: new URL(c.req.url).pathname });
  return { appId: v.appId, humanId: signedIn(v.humanId) };
}

async function preferences(env: Env, v: Awaited<ReturnType<typeof viewer>>) {
  if (v.channels.length === 0) return null;
  if (v.humanId === null) return { notifiable: false, muted: Object.fromEntries(v.channels.map((channel) => [channel, false])) };
  return { notifiable: true, muted: await mutedChannels(env, v.appId, v.humanId, v.channels) };
}

/** The methods each path answers; any other is `method_not_allowed`. */
const METHODS: Record<string, string[]> = {
  "/_svc/notifications": ["GET", "HEAD"],
  "/_svc/notifications/count": ["GET", "HEAD"],
  "/_svc/notifications/read": ["POST"],
  "/_svc/notifications/preferences": ["GET", "HEAD", "PUT"],
};

function noStore(res: Response): Response {
  res.headers.set("Cache-Control", "no-store");
  return res;
}

export function notificationRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/notifications", async (c) => {
    const { appId, humanId } = await inboxOwner(c);
    const query = parseWith(listQuery, c.req.query(), "query");
    return noStore(c.json(await listInbox(c.env, appId, humanId, { limit: query.limit ?? 50, unread: query.unread === "true", before: query.before })));
  });

  app.get("/_svc/notifications/count", async (c) => {
    const { appId, humanId } = await inboxOwner(c);
    return noStore(c.json({ count: await unreadCount(c.env, appId, humanId) }));
  });

  app.post("/_svc/notifications/read", async (c) => {
    const { appId, humanId } = await inboxOwner(c);
    const raw = await readJsonBody(c as unknown as AppContext, true, config(c.env).maxJsonBodyBytes);
    const ids = raw === undefined ? null : parseWith(readBody, raw, "body").ids;
    return noStore(c.json({ marked: await markRead(c.env, appId, humanId, ids) }));
  });

  app.get("/_svc/notifications/preferences", async (c) => noStore(c.json(await preferences(c.env, await viewer(c)))));

  app.put("/_svc/notifications/preferences", async (c) => {
    const v = await viewer(c);
    const humanId = signedIn(v.humanId);
    const raw = await readJsonBody(c as unknown as AppContext, false, config(c.env).maxJsonBodyBytes);
    const body = parseWith(preferenceBody, raw, "body");
    if (!v.channels.includes(body.channel)) {
      throw new RelayError("invalid_request", `This app sends no ${body.channel} notifications.`, { field: "channel", channels: v.channels });
    }
    await setMuted(c.env, v.appId, humanId, body.channel, body.muted);
    return noStore(c.json(await preferences(c.env, v)));
  });

  for (const [path, allow] of Object.entries(METHODS)) {
    app.all(path, (c) => envelope(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use ${allow.join(", ")}.`,
      { method: c.req.method, allow }, { Allow: allow.join(", ") })));
  }
}
