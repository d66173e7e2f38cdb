/**
 * Ownership transfer (spec A States "Transfer"): none → pending → accepted | withdrawn,
 * and a pending offer that outlives its seven days reads as none again.
 *
 * The owner (or their agent) offers the app to an email address; the relay mails that
 * address a single-use link (`trf_` + 128 random bits, sha256 stored). Nothing moves
 * until the person signed in with exactly that address accepts. Accepting is one D1
 * batch whose first statement moves the app only while the offer is still pending and
 * unexpired, the app is live and still the offerer's, and the recipient is below the
 * per-account app cap; every other statement is conditioned on that move, so a race
 * (withdraw, second accept, cap) leaves everything as it was. On acceptance:
 * - the previous owner becomes a plain member (keep_as_member, the default; a member
 *   since the app's creation, so the app sessions they hold keep working, now with a
 *   member's reach) or loses access (remove me); the recipient's own member row, if
 *   any, goes (they own it now);
 * - unspent sign-in grants (including test-session tokens) and preview tokens of the app
 *   are voided, and open feed sockets are asked to reconnect, so access is re-decided;
 * - every live service credential of the app is revoked (the revoke route's own
 *   statement): a credential acts with whatever the app's owner may do, so one minted by
 *   the previous owner would otherwise gain the new owner's authority, and a previous
 *   owner who chose "remove me" would keep an owner-level bearer token. Grant links stay:
 *   each is bounded by its custom role, and the new owner sees and can revoke them;
 * - every outbound connection of the app is deleted: its secrets are the previous owner's
 *   (their API keys, their oauth2 consent), which the new owner's webhooks must not send.
 * App sessions need nothing else: access is re-decided on every request, so the old
 * owner's sessions act as a member's (kept) or are refused (removed) from the next one.
 */
import { errorLogLine } from "../db/query-errors";
import { and, eq, exists, gt, sql } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { apps } from "../db/apps-schema";
import { appTransfers } from "../db/account-schema";
import { getHuman, normaliseEmail } from "../db/humans";
import { LIVE_APPS_OF, personExists, type AppRow } from "../db/apps";
import { revokeCredentialsStatement } from "../db/credentials";
import { isoIn, newId, nowIso, randomHex, sha256Hex } from "../auth/tokens";
import { liveManifest, mailProviderConfigured } from "../apps/members";
import { spendInviteMail } from "../apps/invite-mail-cap";
import { endAllSockets } from "../apps/sockets";
import { mailer } from "../mail/mailer";
import { transferAcceptedMail, transferOfferMail } from "../mail/account-templates";

type TransferRow = typeof appTransfers.$inferSelect;

export const TRANSFER_TTL_SECONDS = 7 * 24 * 3600;
export const TRANSFER_PREFIX = "trf_";
const TOKEN_PATTERN = /^trf_[0-9a-f]{32}$/;

export type TransferStatus = "pending" | "accepted" | "withdrawn" | "expired";

export interface TransferView {
  id: string;
  app_id: string;
  status: TransferStatus;
  to_email: string;
  keep_as_member: boolean;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

export function transferView(row: TransferRow, now = nowIso()): TransferView {
  const status: TransferStatus = row.status === "pending" && row.expiresAt <= now ? "expired" : row.status;
  return {
    id: row.id, app_id: row.appId, status, to_email: row.toEmail, keep_as_member: row.keepAsMember,
    created_at: row.createdAt, expires_at: row.expiresAt, resolved_at: row.resolvedAt,
  };
}

/** The app's pending, unexpired offer, if any. */
export async function pendingTransfer(env: Env, appId: string): Promise<TransferRow | undefined> {
  return (await db(env).select().from(appTransfers)
    .where(and(eq(appTransfers.appId, appId), eq(appTransfers.status, "pending"), gt(appTransfers.expiresAt, nowIso())))
    .limit(1))[0];
}

async function appName(env: Env, app: AppRow): Promise<string> {
  return (await liveManifest(env, app))?.app.name ?? app.slug;
}

export function transferUrl(env: object, token: string): string {
  return `${config(env).apiOrigin}/transfer?token=${encodeURIComponent(token)}`;
}

export interface OfferInput {
  email: string;
  keepAsMember: boolean;
  agentId: string | null;
}

/**
 * Offers the app to `email`. Refused with 409 `conflict` when an offer is already
 * pending (withdraw it first) or the address is the owner's own, with 503
 * `auth_provider_unavailable` when the relay cannot mail, and with 429 `rate_limited`
 * when the owner's daily invitation mail is spent — before anything is stored.
 */
export async function offerTransfer(env: Env, app: AppRow, input: OfferInput): Promise<TransferView> {
  const email = normaliseEmail(input.email);
  const owner = await getHuman(env, app.ownerHumanId);
  if (owner && normaliseEmail(owner.email) === email) {
    throw new RelayError("conflict", "That address is the app owner's own: offer the app to someone else.", { field: "email" });
  }
  const existing = await pendingTransfer(env, app.id);
  if (existing) {
    throw new RelayError("conflict", "A transfer of this app is already pending; withdraw it (DELETE /v1/apps/:id/transfer) before offering it again.",
      { transfer: transferView(existing) });
  }
  if (!mailProviderConfigured(env)) {
    throw new RelayError("auth_provider_unavailable", "This relay cannot send mail, so it cannot offer an app to anyone.", { reason: "mail_not_configured" });
  }
  await spendInviteMail(env, app.ownerHumanId, "transfer offer");
  const token = TRANSFER_PREFIX + randomHex(16);
  const now = nowIso();
  const row: TransferRow = {
    id: newId("tr_"), appId: app.id, fromHumanId: app.ownerHumanId, toEmail: email, tokenHash: await sha256Hex(token),
    keepAsMember: input.keepAsMember, status: "pending", createdByAgentId: input.agentId, createdAt: now,
    expiresAt: isoIn(TRANSFER_TTL_SECONDS), resolvedAt: null, acceptedByHumanId: null,
  };
  // One statement checks "nothing pending" and inserts, so two racing offers cannot both land.
  const inserted = await env.DB.prepare(
    "INSERT INTO app_transfers (id, app_id, from_human_id, to_email, token_hash, keep_as_member, status, created_by_agent_id, created_at, expires_at) " +
    "SELECT ?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9 WHERE NOT EXISTS " +
    "(SELECT 1 FROM app_transfers WHERE app_id = ?2 AND status = 'pending' AND expires_at > ?8)",
  ).bind(row.id, row.appId, row.fromHumanId, row.toEmail, row.tokenHash, row.keepAsMember ? 1 : 0, row.createdByAgentId, now, row.expiresAt).run();
  if (inserted.meta.changes !== 1) {
    throw new RelayError("conflict", "A transfer of this app is already pending; withdraw it before offering it again.");
  }
  try {
    await mailer(env).send(transferOfferMail(email, await appName(env, app), owner?.email ?? "The owner", transferUrl(env, token), row.expiresAt));
  } catch (err) {
    // An offer nobody was told about must not block the next one.
    await db(env).delete(appTransfers).where(eq(appTransfers.id, row.id));
    throw err;
  }
  return transferView(row, now);
}

/** Withdraws the pending offer (its link stops at once); 404 `not_found` when none is pending. */
export async function withdrawTransfer(env: Env, appId: string): Promise<TransferView> {
  const now = nowIso();
  const rows = await db(env).update(appTransfers).set({ status: "withdrawn", resolvedAt: now })
    .where(and(eq(appTransfers.appId, appId), eq(appTransfers.status, "pending"), gt(appTransfers.expiresAt, now)))
    .returning();
  if (!rows[0]) throw new RelayError("not_found", "No transfer of this app is pending.", { field: "transfer" });
  return transferView(rows[0], now);
}

function transferGone(): RelayError {
  return new RelayError("gone", "This transfer offer is unknown, already accepted, withdrawn, or expired, or the app was deleted. Ask the owner to offer it again.");
}

async function findByToken(env: Env, token: string): Promise<TransferRow | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  return (await db(env).select().from(appTransfers).where(eq(appTransfers.tokenHash, await sha256Hex(token))).limit(1))[0];
}

async function liveOffer(env: Env, token: string): Promise<{ transfer: TransferRow; app: AppRow }> {
  const transfer = await findByToken(env, token);
  if (!transfer || transfer.status !== "pending" || transfer.expiresAt <= nowIso()) throw transferGone();
  const app = (await db(env).select().from(apps).where(eq(apps.id, transfer.appId)).limit(1))[0];
  if (!app || app.status === "deleted" || app.status === "suspended" || app.ownerHumanId !== transfer.fromHumanId) throw transferGone();
  return { transfer, app };
}

export interface OfferState {
  app: AppRow;
  appName: string;
  fromEmail: string;
  toEmail: string;
  keepAsMember: boolean;
  expiresAt: string;
}

/** What an offer proposes, for the page that asks to accept it (410 `gone` when unusable). */
export async function describeTransfer(env: Env, token: string): Promise<OfferState> {
  const { transfer, app } = await liveOffer(env, token);
  const from = await getHuman(env, transfer.fromHumanId);
  return {
    app, appName: await appName(env, app), fromEmail: from?.email ?? "", toEmail: transfer.toEmail,
    keepAsMember: transfer.keepAsMember, expiresAt: transfer.expiresAt,
  };
}

export interface Accepted {
  app: AppRow;
  transfer: TransferView;
  /** How many live service credentials of the app the acceptance revoked. */
  credentialsRevoked: number;
}

/**
 * Accepts the offer as the signed-in human. Their address must be the offered one (403
 * `forbidden`, the offer stays pending); 409 `account_quota_exceeded` when they already
 * own MAX_APPS_PER_ACCOUNT live apps (the offer stays pending); 410 `gone` otherwise.
 */
export async function acceptTransfer(env: Env, token: string, human: { humanId: string; email: string }, waitUntil: (p: Promise<unknown>) => void): Promise<Accepted> {
  const { transfer, app } = await liveOffer(env, token);
  const email = normaliseEmail(human.email);
  if (transfer.toEmail !== email) {
    throw new RelayError("forbidden", `This transfer is offered to ${transfer.toEmail}; you are signed in as ${email}. Sign in with the offered address.`,
      { reason: "transfer_email_mismatch" });
  }
  const cap = config(env).limits.MAX_APPS_PER_ACCOUNT;
  const now = nowIso();
  const accepted = "EXISTS (SELECT 1 FROM app_transfers WHERE id = ?1 AND status = 'accepted' AND resolved_at = ?2)";
  const [moved, , , , , , revoked] = await env.DB.batch([
    env.DB.prepare(
      "UPDATE apps SET owner_human_id = ?3, last_activity_at = ?2 WHERE id = ?4 AND owner_human_id = ?5 AND status NOT IN ('deleted', 'suspended') " +
      "AND EXISTS (SELECT 1 FROM app_transfers WHERE id = ?1 AND status = 'pending' AND expires_at > ?2) " +
      `AND ${LIVE_APPS_OF} < ?6 AND ${personExists("?3")}`,
    ).bind(transfer.id, now, human.humanId, app.id, transfer.fromHumanId, cap),
    env.DB.prepare(
      "UPDATE app_transfers SET status = 'accepted', resolved_at = ?2, accepted_by_human_id = ?3 WHERE id = ?1 AND status = 'pending' " +
      "AND EXISTS (SELECT 1 FROM apps WHERE id = ?4 AND owner_human_id = ?3)",
    ).bind(transfer.id, now, human.humanId, app.id),
    env.DB.prepare(
      "INSERT INTO app_members (app_id, human_id, custom_roles, created_at, updated_at) SELECT ?3, ?4, '[]', (SELECT created_at FROM apps WHERE id = ?3), ?2 " +
      `WHERE ?5 = 1 AND ${accepted} ON CONFLICT (app_id, human_id) DO NOTHING`,
    ).bind(transfer.id, now, app.id, transfer.fromHumanId, transfer.keepAsMember ? 1 : 0),
    env.DB.prepare(`DELETE FROM app_members WHERE app_id = ?3 AND human_id = ?4 AND ${accepted}`).bind(transfer.id, now, app.id, human.humanId),
    env.DB.prepare(`DELETE FROM app_session_grants WHERE app_id = ?3 AND ${accepted}`).bind(transfer.id, now, app.id),
    env.DB.prepare(`UPDATE preview_tokens SET revoked_at = ?2 WHERE app_id = ?3 AND revoked_at IS NULL AND ${accepted}`).bind(transfer.id, now, app.id),
    // The same statement as revoking one credential, for every live one of the app.
    revokeCredentialsStatement(env, app.id, {
      at: now,
      onlyIf: exists(db(env).select({ one: sql`1` }).from(appTransfers)
        .where(and(eq(appTransfers.id, transfer.id), eq(appTransfers.status, "accepted"), eq(appTransfers.resolvedAt, now)))),
    }),
    // The previous owner's connections hold their secrets (their API keys, their oauth2 grants).
    env.DB.prepare(`DELETE FROM connection_authorizations WHERE app_id = ?3 AND ${accepted}`).bind(transfer.id, now, app.id),
    env.DB.prepare(`DELETE FROM app_connections WHERE app_id = ?3 AND ${accepted}`).bind(transfer.id, now, app.id),
  ]);
  if (moved.meta.changes !== 1) {
    await liveOffer(env, token); // throws gone when it was withdrawn, spent or expired meanwhile
    const owned = await env.DB.prepare("SELECT count(*) AS n FROM apps WHERE owner_human_id = ?1 AND status != 'deleted'").bind(human.humanId).first<number>("n");
    if ((owned ?? 0) >= cap) {
      throw new RelayError("account_quota_exceeded", `You already own ${cap} apps; delete one before accepting this transfer.`, { limit: cap, resource: "apps" });
    }
    throw transferGone();
  }
  // The previous owner's sockets and any call checked before the move stop now.
  await endAllSockets(env, app.id, "transfer");
  const from = await getHuman(env, transfer.fromHumanId);
  if (from && mailProviderConfigured(env)) {
    const credentials = revoked.meta.changes;
    waitUntil((async () => mailer(env).send(transferAcceptedMail(from.email, await appName(env, app), email, transfer.keepAsMember, credentials)))()
      .catch((err) => console.error("transfer notice not sent", errorLogLine(err))));
  }
  const row = (await db(env).select().from(appTransfers).where(eq(appTransfers.id, transfer.id)).limit(1))[0];
  const current = (await db(env).select().from(apps).where(eq(apps.id, app.id)).limit(1))[0];
  return { app: current, transfer: transferView(row, now), credentialsRevoked: revoked.meta.changes };
}
