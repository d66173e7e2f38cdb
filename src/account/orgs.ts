/**
 * Organizations (spec A "Access"; fields ours): a named group of accounts with roles
 * `admin` and `member`. The creator is the first admin and the billing account. Only
 * admins rename, add, re-role and remove; anyone may leave (remove themselves). The last
 * admin can be neither demoted nor removed (409 `conflict`): the guard is inside the
 * very UPDATE or DELETE statement, so two admins demoting each other at once cannot
 * leave the organization without one. When the billing account leaves, billing passes to
 * the longest-standing remaining admin. To anyone who is not a member, an organization
 * does not exist (404 `not_found`).
 */
import { and, asc, eq } from "drizzle-orm";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { humans } from "../db/schema";
import { orgMembers, orgs } from "../db/account-schema";
import { normaliseEmail } from "../db/humans";
import { newId, nowIso } from "../auth/tokens";

export type OrgRole = "admin" | "member";
type OrgRow = typeof orgs.$inferSelect;

export interface OrgView {
  id: string;
  name: string;
  role: OrgRole;
  billing_human_id: string;
  member_count: number;
  created_at: string;
  updated_at: string;
}

export interface OrgMemberView {
  human_id: string;
  email: string;
  role: OrgRole;
  created_at: string;
}

/** At most this many organizations per account (as a member of any role). */
export const MAX_ORGS_PER_HUMAN = 50;

async function memberCount(env: Env, orgId: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM org_members WHERE org_id = ?1").bind(orgId).first<number>("n")) ?? 0;
}

function view(org: OrgRow, role: OrgRole, count: number): OrgView {
  return { id: org.id, name: org.name, role, billing_human_id: org.billingHumanId, member_count: count, created_at: org.createdAt, updated_at: org.updatedAt };
}

export async function createOrg(env: Env, humanId: string, name: string): Promise<OrgView> {
  const mine = (await env.DB.prepare("SELECT count(*) AS n FROM org_members WHERE human_id = ?1").bind(humanId).first<number>("n")) ?? 0;
  if (mine >= MAX_ORGS_PER_HUMAN) {
    throw new RelayError("account_quota_exceeded", `An account belongs to at most ${MAX_ORGS_PER_HUMAN} organizations.`, { limit: MAX_ORGS_PER_HUMAN, resource: "orgs" });
  }
  const now = nowIso();
  const org: OrgRow = { id: newId("org_"), name, billingHumanId: humanId, createdAt: now, updatedAt: now };
  const d = db(env);
  await d.batch([
    d.insert(orgs).values(org),
    d.insert(orgMembers).values({ orgId: org.id, humanId, role: "admin", createdAt: now, updatedAt: now }),
  ]);
  return view(org, "admin", 1);
}

/** Organizations the human belongs to, oldest membership first, with their role. */
export async function orgsOf(env: Env, humanId: string): Promise<OrgView[]> {
  const rows = await db(env).select({ org: orgs, role: orgMembers.role }).from(orgMembers)
    .innerJoin(orgs, eq(orgs.id, orgMembers.orgId))
    .where(eq(orgMembers.humanId, humanId))
    .orderBy(asc(orgMembers.createdAt), asc(orgs.id));
  return Promise.all(rows.map(async (r) => view(r.org, r.role, await memberCount(env, r.org.id))));
}

/** The organization and the caller's role in it; 404 `not_found` when they are not a member. */
export async function orgFor(env: Env, humanId: string, orgId: string): Promise<{ org: OrgRow; role: OrgRole; view: OrgView }> {
  const row = (await db(env).select({ org: orgs, role: orgMembers.role }).from(orgMembers)
    .innerJoin(orgs, eq(orgs.id, orgMembers.orgId))
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.humanId, humanId))).limit(1))[0];
  if (!row) throw new RelayError("not_found", "You belong to no organization with that id.", { field: "id" });
  return { org: row.org, role: row.role, view: view(row.org, row.role, await memberCount(env, orgId)) };
}

export function requireAdmin(role: OrgRole): void {
  if (role !== "admin") throw new RelayError("forbidden", "Only the organization's admins may do this.", { role });
}

export async function renameOrg(env: Env, orgId: string, name: string): Promise<void> {
  await db(env).update(orgs).set({ name, updatedAt: nowIso() }).where(eq(orgs.id, orgId));
}

export async function membersOfOrg(env: Env, orgId: string): Promise<OrgMemberView[]> {
  const rows = await db(env).select({ m: orgMembers, email: humans.email }).from(orgMembers)
    .innerJoin(humans, eq(humans.id, orgMembers.humanId))
    .where(eq(orgMembers.orgId, orgId))
    .orderBy(asc(orgMembers.createdAt), asc(orgMembers.humanId));
  return rows.map((r) => ({ human_id: r.m.humanId, email: r.email, role: r.m.role, created_at: r.m.createdAt }));
}

async function memberView(env: Env, orgId: string, humanId: string): Promise<OrgMemberView | undefined> {
  return (await membersOfOrg(env, orgId)).find((m) => m.human_id === humanId);
}

/**
 * Adds an existing account by email: 201 with the new member; 404 `not_found` when no
 * account has that address; 409 `conflict` when they already belong (use PATCH to change
 * the role).
 */
export async function addOrgMember(env: Env, orgId: string, email: string, role: OrgRole): Promise<OrgMemberView> {
  const human = (await db(env).select().from(humans).where(eq(humans.email, normaliseEmail(email))).limit(1))[0];
  if (!human) throw new RelayError("not_found", "No account has that address; they must sign in to the relay once before they can be added.", { field: "email" });
  const existing = await memberView(env, orgId, human.id);
  if (existing) throw new RelayError("conflict", "That account already belongs to the organization; change its role with PATCH.", { member: existing });
  const now = nowIso();
  await db(env).insert(orgMembers).values({ orgId, humanId: human.id, role, createdAt: now, updatedAt: now }).onConflictDoNothing();
  return (await memberView(env, orgId, human.id))!;
}

/** The last admin stays: the guard counts the other admins in the same statement. */
const OTHER_ADMINS = "(SELECT count(*) FROM org_members WHERE org_id = ?1 AND role = 'admin' AND human_id != ?2) > 0";

function lastAdmin(action: string): RelayError {
  return new RelayError("conflict", `The organization's last admin cannot be ${action}; make someone else an admin first.`, { reason: "last_admin" });
}

/** Sets a member's role; 404 for a non-member, 409 for demoting the last admin. */
export async function setOrgRole(env: Env, orgId: string, humanId: string, role: OrgRole): Promise<OrgMemberView> {
  const existing = await memberView(env, orgId, humanId);
  if (!existing) throw new RelayError("not_found", "The organization has no member with that id.", { field: "humanId" });
  if (existing.role === role) return existing;
  const guard = role === "member" ? ` AND ${OTHER_ADMINS}` : "";
  const res = await env.DB.prepare(`UPDATE org_members SET role = ?3, updated_at = ?4 WHERE org_id = ?1 AND human_id = ?2${guard}`)
    .bind(orgId, humanId, role, nowIso()).run();
  if (res.meta.changes !== 1) throw lastAdmin("demoted");
  await moveBillingIfNeeded(env, orgId);
  return (await memberView(env, orgId, humanId))!;
}

/**
 * Removes a member (204 also when they were not one); 409 for the last admin. When the
 * billing account leaves or stops being an admin, billing moves to the oldest admin.
 */
export async function removeOrgMember(env: Env, orgId: string, humanId: string): Promise<void> {
  const res = await env.DB.prepare(`DELETE FROM org_members WHERE org_id = ?1 AND human_id = ?2 AND (role != 'admin' OR ${OTHER_ADMINS})`)
    .bind(orgId, humanId).run();
  if (res.meta.changes !== 1) {
    const stillThere = await memberView(env, orgId, humanId);
    if (stillThere) throw lastAdmin("removed");
    return;
  }
  await moveBillingIfNeeded(env, orgId);
}

async function moveBillingIfNeeded(env: Env, orgId: string): Promise<void> {
  await env.DB.prepare(
    "UPDATE orgs SET billing_human_id = (SELECT human_id FROM org_members WHERE org_id = ?1 AND role = 'admin' ORDER BY created_at, human_id LIMIT 1), updated_at = ?2 " +
    "WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM org_members WHERE org_id = ?1 AND human_id = orgs.billing_human_id AND role = 'admin') " +
    "AND EXISTS (SELECT 1 FROM org_members WHERE org_id = ?1 AND role = 'admin')",
  ).bind(orgId, nowIso()).run();
}
