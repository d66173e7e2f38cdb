/**
 * A person's in-app notifications in one app (WIRE §4.3 `/_svc/notifications`): listed
 * newest first, counted unread, marked read; and the channels they muted for the app
 * (WIRE §4.2 `notifications.preferences`). Only `inapp` notifications that reached the
 * person (`sent`) are in the inbox; the suppressed, muted and capped ones are records,
 * not messages. Every query is scoped to (app, person), so nobody sees another's.
 */
import { and, count, desc, eq, isNull, lt, or } from "drizzle-orm";
import { inList } from "../../db/in-list";
import { db } from "../../db/client";
import { notifications, notifyMutes } from "../../db/notify-schema";
import type { NotifyChannel } from "../../manifest";

/** An in-app notification as the page gets it. */
export interface InboxItem {
  id: string;
  subject: string;
  body: string;
  link: string | null;
  collection_name: string;
  row_key: string;
  op: string;
  created_at: string;
  read_at: string | null;
}

export interface InboxPage {
  notifications: InboxItem[];
  has_more: boolean;
}

function inboxOf(appId: string, humanId: string) {
  return and(eq(notifications.appId, appId), eq(notifications.humanId, humanId), eq(notifications.channel, "inapp"), eq(notifications.status, "sent"));
}

function item(row: typeof notifications.$inferSelect): InboxItem {
  return {
    id: row.id, subject: row.subject, body: row.body, link: row.link, collection_name: row.collection, row_key: row.rowKey, op: row.op,
    created_at: row.createdAt, read_at: row.readAt,
  };
}

/** Newest first; `before`: the id of the last item of the previous page; `unread`: only those not read yet. */
export async function listInbox(env: Env, appId: string, humanId: string, query: { limit: number; unread: boolean; before?: string }): Promise<InboxPage> {
  const d = db(env);
  const conditions = [inboxOf(appId, humanId)];
  if (query.unread) conditions.push(isNull(notifications.readAt));
  if (query.before !== undefined) {
    const cursor = (await d.select({ createdAt: notifications.createdAt }).from(notifications)
      .where(and(inboxOf(appId, humanId), eq(notifications.id, query.before))).limit(1))[0];
    if (!cursor) return { notifications: [], has_more: false };
    conditions.push(or(lt(notifications.createdAt, cursor.createdAt), and(eq(notifications.createdAt, cursor.createdAt), lt(notifications.id, query.before))));
  }
  const rows = await d.select().from(notifications).where(and(...conditions))
    .orderBy(desc(notifications.createdAt), desc(notifications.id)).limit(query.limit + 1);
  return { notifications: rows.slice(0, query.limit).map(item), has_more: rows.length > query.limit };
}

export async function unreadCount(env: Env, appId: string, humanId: string): Promise<number> {
  const row = (await db(env).select({ n: count() }).from(notifications).where(and(inboxOf(appId, humanId), isNull(notifications.readAt))))[0];
  return row?.n ?? 0;
}

/** Marks the given ids read (those of others or unknown are ignored), or every unread one; answers how many changed. */
export async function markRead(env: Env, appId: string, humanId: string, ids: string[] | null, now = new Date().toISOString()): Promise<number> {
  const scope = and(inboxOf(appId, humanId), isNull(notifications.readAt), ids === null ? undefined : inList(notifications.id, ids));
  const changed = await db(env).update(notifications).set({ readAt: now }).where(scope).returning({ id: notifications.id });
  return changed.length;
}

/** The channels among `channels` this person muted in this app, as `{ channel: muted }`. */
export async function mutedChannels(env: Env, appId: string, humanId: string, channels: readonly NotifyChannel[]): Promise<Record<string, boolean>> {
  const rows = await db(env).select({ channel: notifyMutes.channel }).from(notifyMutes)
    .where(and(eq(notifyMutes.appId, appId), eq(notifyMutes.humanId, humanId)));
  const muted = new Set<string>(rows.map((row) => row.channel));
  return Object.fromEntries(channels.map((channel) => [channel, muted.has(channel)]));
}

export async function setMuted(env: Env, appId: string, humanId: string, channel: NotifyChannel, muted: boolean): Promise<void> {
  const d = db(env);
  if (muted) {
    await d.insert(notifyMutes).values({ appId, humanId, channel, createdAt: new Date().toISOString() }).onConflictDoNothing();
  } else {
    await d.delete(notifyMutes).where(and(eq(notifyMutes.appId, appId), eq(notifyMutes.humanId, humanId), eq(notifyMutes.channel, channel)));
  }
}
