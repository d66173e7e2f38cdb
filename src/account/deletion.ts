/**
 * Account deletion (`DELETE /v1/self`, spec A "Account"). Asking mails the account's
 * address a confirmation link (`del_` + 128 random bits, sha256 stored, one hour, one
 * per account: asking again replaces the link). Nothing happens until the link's page is
 * confirmed with a form post. Confirming spends the link (one conditional DELETE, so two
 * confirmations cannot both run) and then, in one D1 batch:
 * - every app the person owns that is not already deleted goes to the trash (status
 *   deleted, restorable by nobody since the account is gone, purged by the trash sweep
 *   after TRASH_DAYS);
 * - every key of every agent they claimed is revoked (the agents answer 401
 *   invalid_api_key from the next request); device codes they approved and not yet
 *   collected are denied;
 * - every session is deleted (signed out everywhere), and so are unused claim codes,
 *   pending sign-in links for the address, and unspent app sign-in grants;
 * - their memberships of other people's apps end; pending ownership transfers they
 *   offered are withdrawn; the template reviews they wrote and the reports they filed
 *   are deleted (a publisher's rating no longer counts them);
 * - organizations: their memberships end; where they were the last admin, the
 *   longest-standing remaining member becomes admin; where they were alone, the
 *   organization is deleted; billing moves to the longest-standing remaining admin;
 * - favorites, views, dismissed badges, the signup answer, push subscriptions, flow
 *   counters and the taste notes of their agents (notes about this person) are deleted, and finally the person (the `humans` row) itself. The address
 *   can sign up again later as a new, empty account.
 * Open feed sockets of the trashed apps, and theirs on other apps, are then closed.
 */
import { and, eq, gt } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { accountDeletions } from "../db/account-schema";
import { getHuman, type HumanRow } from "../db/humans";
import { isoIn, nowIso, randomHex, sha256Hex } from "../auth/tokens";
import { mailProviderConfigured } from "../apps/members";
import { endAllSockets, endSockets } from "../apps/sockets";
import { mailer } from "../mail/mailer";
import { accountDeletionMail } from "../mail/account-templates";

export const DELETION_TTL_SECONDS = 3600;
const PATTERN = /^del_[0-9a-f]{32}$/;

export function deletionUrl(env: object, token: string): string {
  return `${config(env).apiOrigin}/account/delete?token=${encodeURIComponent(token)}`;
}

/** Mails the confirmation link; 503 `auth_provider_unavailable` when the relay cannot mail. */
export async function requestDeletion(env: Env, humanId: string): Promise<{ email: string; expiresAt: string }> {
  const human = (await getHuman(env, humanId))!;
  if (!mailProviderConfigured(env)) {
    throw new RelayError("auth_provider_unavailable", "This relay cannot send mail, so it cannot confirm an account deletion.", { reason: "mail_not_configured" });
  }
  const token = `del_${randomHex(16)}`;
  const values = { tokenHash: await sha256Hex(token), createdAt: nowIso(), expiresAt: isoIn(DELETION_TTL_SECONDS) };
  await db(env).insert(accountDeletions).values({ humanId, ...values })
    .onConflictDoUpdate({ target: accountDeletions.humanId, set: values });
  await mailer(env).send(accountDeletionMail(human.email, deletionUrl(env, token)));
  return { email: human.email, expiresAt: values.expiresAt };
}

function deletionGone(): RelayError {
  return new RelayError("gone", "This confirmation link is unknown, already used, replaced by a newer one, or expired. Ask again from your account page (/account/delete), or with DELETE /v1/self.");
}

/** The account a live confirmation link would delete (410 `gone` otherwise). */
export async function describeDeletion(env: Env, token: string): Promise<HumanRow> {
  if (!PATTERN.test(token)) throw deletionGone();
  const row = (await db(env).select().from(accountDeletions)
    .where(and(eq(accountDeletions.tokenHash, await sha256Hex(token)), gt(accountDeletions.expiresAt, nowIso()))).limit(1))[0];
  const human = row ? await getHuman(env, row.humanId) : undefined;
  if (!human) throw deletionGone();
  return human;
}

export interface DeletionOutcome {
  humanId: string;
  email: string;
  trashedApps: string[];
  revokedAgents: string[];
}

/** Spends the link and deletes the account as described above; 410 `gone` for a dead link. */
export async function confirmDeletion(env: Env, token: string): Promise<DeletionOutcome> {
  if (!PATTERN.test(token)) throw deletionGone();
  const now = nowIso();
  const claimed = await env.DB.prepare("DELETE FROM account_deletions WHERE token_hash = ?1 AND expires_at > ?2 RETURNING human_id")
    .bind(await sha256Hex(token), now).first<{ human_id: string }>();
  const human = claimed ? await getHuman(env, claimed.human_id) : undefined;
  if (!human) throw deletionGone();
  const h = human.id;

  const agents = (await env.DB.prepare("SELECT id FROM agents WHERE owner_human_id = ?1").bind(h).all<{ id: string }>()).results.map((r) => r.id);
  const joined = (await env.DB.prepare("SELECT app_id FROM app_members WHERE human_id = ?1").bind(h).all<{ app_id: string }>()).results.map((r) => r.app_id);
  const orgIds = (await env.DB.prepare("SELECT org_id FROM org_members WHERE human_id = ?1").bind(h).all<{ org_id: string }>()).results.map((r) => r.org_id);

  const oldestOther = "(SELECT human_id FROM org_members o2 WHERE o2.org_id = ?2 AND o2.human_id != ?1 ORDER BY o2.created_at, o2.human_id LIMIT 1)";
  const orgStatements = orgIds.flatMap((orgId) => [
    // The last admin leaving: the longest-standing other member becomes admin.
    env.DB.prepare(
      `UPDATE org_members SET role = 'admin', updated_at = ?3 WHERE org_id = ?2 AND human_id = ${oldestOther} ` +
      "AND NOT EXISTS (SELECT 1 FROM org_members o3 WHERE o3.org_id = ?2 AND o3.role = 'admin' AND o3.human_id != ?1)",
    ).bind(h, orgId, now),
    env.DB.prepare("DELETE FROM org_members WHERE org_id = ?2 AND human_id = ?1").bind(h, orgId),
    env.DB.prepare(
      "UPDATE orgs SET billing_human_id = (SELECT human_id FROM org_members WHERE org_id = ?2 AND role = 'admin' ORDER BY created_at, human_id LIMIT 1), updated_at = ?3 " +
      "WHERE id = ?2 AND billing_human_id = ?1 AND EXISTS (SELECT 1 FROM org_members WHERE org_id = ?2 AND role = 'admin')",
    ).bind(h, orgId, now),
    env.DB.prepare("DELETE FROM orgs WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM org_members WHERE org_id = ?1)").bind(orgId),
  ]);

  const stamped = (sql: string) => env.DB.prepare(sql).bind(h, now);
  const byHuman = (sql: string) => env.DB.prepare(sql).bind(h);
  await env.DB.batch([
    stamped("UPDATE apps SET status_before_delete = status, status = 'deleted', deleted_at = ?2 WHERE owner_human_id = ?1 AND status != 'deleted'"),
    stamped("UPDATE agent_keys SET revoked_at = ?2 WHERE revoked_at IS NULL AND agent_id IN (SELECT id FROM agents WHERE owner_human_id = ?1)"),
    byHuman("DELETE FROM taste_notes WHERE agent_id IN (SELECT id FROM agents WHERE owner_human_id = ?1)"),
    byHuman("UPDATE device_codes SET status = 'denied' WHERE human_id = ?1 AND status IN ('pending', 'approved')"),
    byHuman("DELETE FROM sessions WHERE human_id = ?1"),
    byHuman("DELETE FROM claim_codes WHERE human_id = ?1"),
    env.DB.prepare("DELETE FROM magic_links WHERE email = ?1").bind(human.email),
    byHuman("DELETE FROM app_session_grants WHERE human_id = ?1"),
    byHuman("DELETE FROM app_members WHERE human_id = ?1"),
    byHuman("DELETE FROM template_reviews WHERE reviewer_human_id = ?1"),
    byHuman("DELETE FROM review_reports WHERE reporter_human_id = ?1"),
    stamped("UPDATE app_transfers SET status = 'withdrawn', resolved_at = ?2 WHERE from_human_id = ?1 AND status = 'pending'"),
    ...orgStatements,
    ...["app_favorites", "app_views", "upgrade_dismissals", "signup_sources", "push_subscriptions", "usage_flows", "account_deletions"]
      .map((table) => byHuman(`DELETE FROM ${table} WHERE human_id = ?1`)),
    byHuman("DELETE FROM humans WHERE id = ?1"),
  ]);

  // Read after the batch, so an app created meanwhile is reported too.
  const trashed = (await env.DB.prepare("SELECT id FROM apps WHERE owner_human_id = ?1 AND status = 'deleted' AND deleted_at = ?2").bind(h, now).all<{ id: string }>()).results.map((r) => r.id);
  await Promise.all([
    ...trashed.map((appId) => endAllSockets(env, appId, "account deletion")),
    ...joined.map((appId) => endSockets(env, appId, { humanId: h }, "account deletion")),
  ]);
  return { humanId: h, email: human.email, trashedApps: trashed, revokedAgents: agents };
}
