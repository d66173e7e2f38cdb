/**
 * Reading an app's change feed newest first, a page at a time, for a person (the owner
 * console). The store's feed reads forwards from a cursor (the same `feed` call as
 * `GET /v1/apps/:id/feed`, with the caller's own permissions and no waiting), so a page is
 * the window of sequence numbers just below `before`, read forwards and turned around.
 * Where the feed ends is what the store answers a cursor past its newest entry with
 * (`resync_required`, whose details carry `head` and the retention `floor`), as WIRE §2.4
 * describes for every feed reader. Which apps have a readable feed is decided here too,
 * for both doors: a dormant app is a conflict, an archived or suspended one `gone`.
 */
import { RelayError } from "../errors";
import type { AppRow } from "../db/apps";
import type { AppStoreApi, CallContext, FeedEntry } from "../../durable-objects/app-store/contract";
import { unwrap } from "./store-call";

/** Refuses a live app whose feed cannot be read now (the trash is refused before), with the answer the feed endpoint gives. */
export function requireFeedReadable(app: AppRow): AppRow {
  if (app.status === "dormant") throw new RelayError("conflict", "app is dormant", { status: "dormant" });
  if (app.status === "archived" || app.status === "suspended") throw new RelayError("gone", `This app is ${app.status}.`, { status: app.status });
  return app;
}

export interface FeedBounds {
  /** The newest entry's seq (0 for an empty feed). */
  head: number;
  /** Entries at or below this seq were pruned. */
  floor: number;
}

/** The feed's newest seq and retention floor, as the store reports them to a cursor past the end. */
async function feedBounds(store: AppStoreApi, call: CallContext): Promise<FeedBounds> {
  const answer = await store.feed(call, Number.MAX_SAFE_INTEGER, 1, 0);
  if (!answer.ok && answer.error.code === "resync_required") {
    const { head, floor } = answer.error.details ?? {};
    if (typeof head === "number" && typeof floor === "number") return { head, floor };
  }
  unwrap(answer);
  throw new Error("the feed answered a cursor past its end without its bounds");
}

export interface RecentFeedPage {
  /** Newest first. */
  entries: FeedEntry[];
  /** The `before` of the next (older) page, or null when nothing older is kept. */
  next: number | null;
  bounds: FeedBounds;
}

/** Up to `limit` entries with a seq below `before` (default: all of them), newest first. */
export async function recentFeed(store: AppStoreApi, call: CallContext, input: { before?: number; limit: number }): Promise<RecentFeedPage> {
  const bounds = await feedBounds(store, call);
  const end = Math.min(input.before ?? bounds.head + 1, bounds.head + 1) - 1;
  const start = Math.max(bounds.floor, end - input.limit);
  const entries: FeedEntry[] = [];
  let since = start;
  while (since < end) {
    const page = unwrap(await store.feed(call, since, end - since, 0));
    entries.push(...page.entries.filter((entry) => entry.seq <= end));
    // The cursor passes entries the caller may not read too; it only stops short of `end` when a page was cut by size.
    if (page.cursor <= since) break;
    since = page.cursor;
  }
  return { entries: entries.reverse(), next: start > bounds.floor ? start + 1 : null, bounds };
}
