/**
 * Publisher profiles (WIRE §2.10 PublisherProfile): a human's public face in the gallery.
 * A profile row appears the first time a human looks at it, claims a handle or publishes;
 * the handle is claimed once and never changes; display name, bio and url are edited
 * with `null` clearing and an omitted field left alone; the trust level is the
 * operators' to set. The counts on the profile are read from the snapshots and the
 * visible reviews (src/community/reviews.ts), never stored.
 */
import { and, count, eq, isNull } from "drizzle-orm";
import { db } from "../db/client";
import { publishers, templateSnapshots } from "../db/community-schema";
import { nowIso } from "../auth/tokens";
import { RelayError } from "../errors";
import { publisherByHandle, publisherByHuman, type PublisherRow } from "./snapshots";
import { ratingTotals } from "./reviews";

type Env = { DB: D1Database };

export const HANDLE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,30}[a-z0-9])$/;
export const TRUST_LEVELS = ["new", "established"] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];

export interface PublisherProfile {
  handle: string | null;
  display_name: string | null;
  bio: string | null;
  url: string | null;
  claimed: boolean;
  claimed_at: string | null;
  created_at: string;
  first_published_at: string | null;
  approved_template_count: number;
  rating_count: number;
  rating_sum: number;
  trust_level: TrustLevel;
}

/** The fields `POST /v1/publisher/update` may change: a value sets, `null` clears, absent leaves alone. */
export interface ProfileEdit {
  display_name?: string | null;
  bio?: string | null;
  url?: string | null;
}

/** The human's profile row, made on first use. */
export async function ensurePublisher(env: Env, humanId: string): Promise<PublisherRow> {
  const existing = await publisherByHuman(env, humanId);
  if (existing) return existing;
  await db(env).insert(publishers).values({ humanId, createdAt: nowIso() }).onConflictDoNothing();
  return (await publisherByHuman(env, humanId))!;
}

/** What a profile shows, with the listed-template count and the visible reviews' stars read fresh. */
export async function profileView(env: Env, publisher: PublisherRow): Promise<PublisherProfile> {
  const [[listed], ratings] = await Promise.all([
    db(env).select({ total: count() }).from(templateSnapshots).where(and(
      eq(templateSnapshots.publisherHumanId, publisher.humanId),
      eq(templateSnapshots.reviewStatus, "approved"),
      isNull(templateSnapshots.unpublishedAt),
      isNull(templateSnapshots.supersededAt),
    )),
    ratingTotals(env, publisher.humanId),
  ]);
  return {
    handle: publisher.handle,
    display_name: publisher.displayName,
    bio: publisher.bio,
    url: publisher.url,
    claimed: publisher.handle !== null,
    claimed_at: publisher.claimedAt,
    created_at: publisher.createdAt,
    first_published_at: publisher.firstPublishedAt,
    approved_template_count: listed?.total ?? 0,
    ...ratings,
    trust_level: publisher.trustLevel,
  };
}

/** Claims `handle` for the human: once, permanently, and only a handle nobody holds. */
export async function claimHandle(env: Env, humanId: string, handle: string): Promise<PublisherRow> {
  const publisher = await ensurePublisher(env, humanId);
  if (publisher.handle !== null) {
    throw new RelayError("handle_already_claimed", `Your handle is already "${publisher.handle}"; handles are permanent.`, { handle: publisher.handle });
  }
  const holder = await publisherByHandle(env, handle);
  if (holder) throw new RelayError("handle_taken", `The handle "${handle}" is taken.`, { field: "handle", handle });
  const claimed = await db(env).update(publishers).set({ handle, claimedAt: nowIso() })
    .where(and(eq(publishers.humanId, humanId), isNull(publishers.handle)))
    .returning().catch((err: unknown) => {
      // The unique index decides a race between two claims of one handle.
      if (String(err).includes("UNIQUE")) throw new RelayError("handle_taken", `The handle "${handle}" is taken.`, { field: "handle", handle });
      throw err;
    });
  if (claimed.length === 0) return claimHandle(env, humanId, handle);
  return claimed[0];
}

export async function editProfile(env: Env, humanId: string, edit: ProfileEdit): Promise<PublisherRow> {
  const publisher = await ensurePublisher(env, humanId);
  const changes: Partial<Pick<PublisherRow, "displayName" | "bio" | "url">> = {};
  if (edit.display_name !== undefined) changes.displayName = edit.display_name;
  if (edit.bio !== undefined) changes.bio = edit.bio;
  if (edit.url !== undefined) changes.url = edit.url;
  if (Object.keys(changes).length === 0) return publisher;
  const [updated] = await db(env).update(publishers).set(changes).where(eq(publishers.humanId, humanId)).returning();
  return updated;
}

/** An operator sets the trust level of the publisher behind a claimed handle. */
export async function setTrust(env: Env, handle: string, level: TrustLevel, operatorHumanId: string): Promise<PublisherRow> {
  const publisher = await publisherByHandle(env, handle);
  if (!publisher) throw new RelayError("publisher_not_found", `No publisher has claimed "${handle.slice(0, 64)}".`, { handle: handle.slice(0, 64) });
  const [updated] = await db(env).update(publishers)
    .set({ trustLevel: level, trustSetAt: nowIso(), trustSetByHumanId: operatorHumanId })
    .where(eq(publishers.humanId, publisher.humanId)).returning();
  return updated;
}
