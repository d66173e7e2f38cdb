/**
 * App members (WIRE §2.5, spec A "Members"): the rules both the API and the console
 * follow. An owner adds a person by email: a person who already has an account becomes a
 * member at once; anyone else is mailed an invitation (seven days, single use, only for
 * that address) whose acceptance, after signing in as that address, creates the
 * membership. Custom roles must be declared by the live manifest (never built-ins), at
 * most eight per member. The owner is listed first and can be neither re-roled nor
 * removed. The roles summary asks the permission engine itself (`roleAccess`).
 *
 * Removing a member and changing a member's roles happen only through `removeAppMember`
 * and `setAppMemberRoles` (and `addByEmail` re-roling an existing member), which also
 * close that person's open feed sockets (1012): a socket keeps the principal it was opened
 * with, so the reconnect is what sees the member gone or their new roles. App sessions are
 * not revoked by a role change (WIRE §2.5); each request re-reads the roles.
 */
import { errorLogLine } from "../db/query-errors";
import { config } from "../config";
import { RelayError } from "../errors";
import type { AppRow } from "../db/apps";
import { liveManifest } from "./live-manifest";
import { getHuman, normaliseEmail, type HumanRow } from "../db/humans";
import { db } from "../db/client";
import { humans } from "../db/schema";
import { apps } from "../db/apps-schema";
import { eq } from "drizzle-orm";
import {
  acceptInvite, addMember, findInvite, findMember, inviteUsable, listMembers, removeMember, roleCounts, setMemberRoles, upsertInvite,
  type MemberWithEmail,
} from "../db/members";
import { activeGrantCounts } from "../db/grant-links";
import { mailer } from "../mail/mailer";
import { memberAddedMail, memberInviteMail } from "../mail/templates";
import { roleAccess, type Access } from "../permissions";
import { RESERVED_NAMES } from "../manifest/permissions";
import type { CompiledManifest } from "../manifest";
import { mayMailNotice, spendInviteMail } from "./invite-mail-cap";
import { appUrl } from "./urls";
import { endSockets } from "./sockets";

export const MAX_CUSTOM_ROLES = 8;

/** The wire's Member (camelCase, WIRE §1.7); `customRole` is the legacy first-role view. */
export interface MemberView {
  humanId: string;
  email: string;
  role: "owner" | "member";
  customRoles: string[];
  customRole: string | null;
  createdAt: string;
}

export function memberView(m: MemberWithEmail): MemberView {
  return { humanId: m.humanId, email: m.email, role: "member", customRoles: m.customRoles, customRole: m.customRoles[0] ?? null, createdAt: m.createdAt };
}

export function ownerView(app: AppRow, owner: HumanRow | undefined): MemberView {
  return { humanId: app.ownerHumanId, email: owner?.email ?? "", role: "owner", customRoles: [], customRole: null, createdAt: app.createdAt };
}

/** The owner first, then members oldest first. */
export async function membersOf(env: Env, app: AppRow): Promise<MemberView[]> {
  const [owner, members] = await Promise.all([getHuman(env, app.ownerHumanId), listMembers(env, app.id)]);
  return [ownerView(app, owner), ...members.map(memberView)];
}

/** Re-exported for the many callers that import it from here; defined in live-manifest.ts. */
export { liveManifest };

/**
 * Checks a requested list of custom roles against the live manifest: each a declared
 * role (built-ins and undeclared names are refused), at most eight. Duplicates collapse,
 * the first mention's order kept.
 */
export function checkRoles(manifest: CompiledManifest | null, requested: string[]): string[] {
  const roles = [...new Set(requested)];
  const declared = manifest ? Object.keys(manifest.roles) : [];
  for (const role of roles) {
    if (RESERVED_NAMES.includes(role)) {
      throw new RelayError("invalid_request", `"${role}" is a built-in role; custom_roles names only roles the manifest declares.`,
        { field: "custom_roles", role, declared });
    }
    if (!Object.hasOwn(manifest?.roles ?? {}, role)) {
      throw new RelayError("invalid_request", `The app's manifest declares no role "${role.slice(0, 64)}".`,
        { field: "custom_roles", role: role.slice(0, 64), declared });
    }
  }
  if (roles.length > MAX_CUSTOM_ROLES) {
    throw new RelayError("invalid_request", `A member holds at most ${MAX_CUSTOM_ROLES} custom roles; ${roles.length} were given.`,
      { field: "custom_roles", limit: MAX_CUSTOM_ROLES });
  }
  return roles;
}

/**
 * Whether the relay can send mail: development mode always can (the outbox); production
 * needs an HTTP mail API (`MAIL_HTTP_URL`), or the `MAIL` send_email binding and a
 * `MAIL_FROM` address.
 */
export function mailProviderConfigured(env: object): boolean {
  if (config(env).development || config(env).mailHttp) return true;
  const raw = env as { MAIL?: { send?: unknown }; MAIL_FROM?: unknown };
  return typeof raw.MAIL?.send === "function" && typeof raw.MAIL_FROM === "string" && raw.MAIL_FROM.trim() !== "";
}

export function inviteUrl(env: object, token: string): string {
  return `${config(env).apiOrigin}/invite?token=${encodeURIComponent(token)}`;
}

function ownerConflict(humanId: string, what: "re-roled" | "removed"): RelayError {
  const message = what === "removed" ? "The owner cannot be removed from their own app." : "The owner cannot be re-roled: they always have full access.";
  return new RelayError("conflict", message, { human_id: humanId });
}

function notMember(): RelayError {
  return new RelayError("not_found", "This app has no member with that id.", { field: "humanId" });
}

/**
 * Sets a member's custom roles (checked against the live manifest; `[]` clears) and asks
 * their open feed sockets to reconnect, so they see with the new roles. 409 `conflict` for
 * the owner, 404 `not_found` for someone who is not a member.
 */
export async function setAppMemberRoles(env: Env, app: AppRow, humanId: string, requested: string[]): Promise<MemberView> {
  if (humanId === app.ownerHumanId) throw ownerConflict(humanId, "re-roled");
  const member = await findMember(env, app.id, humanId);
  if (!member) throw notMember();
  const roles = checkRoles(await liveManifest(env, app), requested);
  if (!(await setMemberRoles(env, app.id, humanId, roles))) throw notMember();
  await endSockets(env, app.id, { humanId }, "member re-roled");
  return memberView({ ...member, customRoles: roles });
}

/**
 * Ends a membership (idempotent; see db `removeMember`) and closes the person's open feed
 * sockets, so the reconnect is judged without it. 409 `conflict` for the owner.
 */
export async function removeAppMember(env: Env, app: AppRow, humanId: string): Promise<void> {
  if (humanId === app.ownerHumanId) throw ownerConflict(humanId, "removed");
  await removeMember(env, app.id, humanId);
  await endSockets(env, app.id, { humanId }, "member removed");
}

export interface AddInput {
  email: string;
  roles: string[] | undefined;
  actor: { humanId: string; agentId: string | null };
}

export type AddResult =
  | { kind: "member"; member: MemberView; created: boolean }
  | { kind: "invited"; email: string; expiresAt: string };

async function humanByEmail(env: Env, email: string): Promise<HumanRow | undefined> {
  return (await db(env).select().from(humans).where(eq(humans.email, email)).limit(1))[0];
}

async function appName(env: Env, app: AppRow): Promise<string> {
  return (await liveManifest(env, app))?.app.name ?? app.slug;
}

/**
 * Adds a person by email: an existing account becomes a member (201 when new, 200 when
 * already one; given roles replace theirs), anyone else gets a mailed invitation (503
 * `auth_provider_unavailable` when the relay cannot send mail, 429 `rate_limited` when
 * the owner's daily invitation mail is spent, both before anything is stored). The
 * owner's own address is a conflict.
 */
export async function addByEmail(env: Env, app: AppRow, input: AddInput, waitUntil: (p: Promise<unknown>) => void): Promise<AddResult> {
  const email = normaliseEmail(input.email);
  const manifest = await liveManifest(env, app);
  const roles = input.roles === undefined ? undefined : checkRoles(manifest, input.roles);
  const human = await humanByEmail(env, email);
  if (human?.id === app.ownerHumanId) {
    throw new RelayError("conflict", "That address belongs to the app's owner, who is always on the app and cannot be re-roled.", { human_id: human.id });
  }
  const name = manifest?.app.name ?? app.slug;
  if (human) {
    const { created } = await addMember(env, app.id, human.id, roles);
    // An existing member given roles was re-roled: their open sockets still see with the old ones.
    if (!created && roles !== undefined) await endSockets(env, app.id, { humanId: human.id }, "member re-roled");
    const member = await findMember(env, app.id, human.id);
    // A courtesy notice, within the owner's daily mail cap; the membership stands whether or not it is sent.
    if (created && mailProviderConfigured(env) && (await mayMailNotice(env, app.ownerHumanId))) {
      waitUntil(mailer(env).send(memberAddedMail(email, name, appUrl(config(env), app.slug))).catch((err) => console.error("member notice not sent", errorLogLine(err))));
    }
    return { kind: "member", member: memberView(member!), created };
  }
  if (!mailProviderConfigured(env)) {
    throw new RelayError("auth_provider_unavailable", "This relay cannot send mail, so it cannot invite someone who has no account yet.",
      { reason: "mail_not_configured" });
  }
  await spendInviteMail(env, app.ownerHumanId, "invitation");
  const invite = await upsertInvite(env, { appId: app.id, email, roles: roles ?? [], invitedByHumanId: input.actor.humanId, invitedByAgentId: input.actor.agentId });
  await mailer(env).send(memberInviteMail(email, name, inviteUrl(env, invite.token)));
  return { kind: "invited", email, expiresAt: invite.expiresAt };
}

export interface InviteState {
  app: AppRow;
  email: string;
  appName: string;
  expiresAt: string;
}

function inviteGone(): RelayError {
  return new RelayError("gone", "This invitation is unknown, already used, replaced by a newer one, or expired. Ask the app's owner to invite you again.");
}

async function liveInvite(env: Env, token: string) {
  const invite = await findInvite(env, token);
  if (!invite || !inviteUsable(invite)) throw inviteGone();
  const app = (await db(env).select().from(apps).where(eq(apps.id, invite.appId)).limit(1))[0];
  if (!app || app.status === "deleted" || app.status === "suspended") throw inviteGone();
  return { invite, app };
}

/** What an invitation offers, for the page that asks to accept it (410 `gone` when unusable). */
export async function describeInvite(env: Env, token: string): Promise<InviteState> {
  const { invite, app } = await liveInvite(env, token);
  return { app, email: invite.email, appName: await appName(env, app), expiresAt: invite.expiresAt };
}

/**
 * Accepts an invitation as the signed-in human. Their account address must be the
 * invited one (403 `forbidden` otherwise, and the invitation stays usable); a spent,
 * refreshed or expired invitation is 410 `gone`.
 */
export async function acceptInvitation(env: Env, token: string, human: { humanId: string; email: string }): Promise<{ app: AppRow; member: MemberView | null }> {
  const { invite, app } = await liveInvite(env, token);
  const email = normaliseEmail(human.email);
  if (invite.email !== email) {
    throw new RelayError("forbidden", `This invitation is for ${invite.email}; you are signed in as ${email}. Sign in with the invited address.`,
      { reason: "invite_email_mismatch" });
  }
  if (!(await acceptInvite(env, token, human.humanId, email))) throw inviteGone();
  const member = await findMember(env, app.id, human.humanId);
  return { app, member: member ? memberView(member) : null };
}

export interface RoleSummary {
  name: string;
  label: string;
  description: string | null;
  collections: Array<{ name: string; member_access: Access; grant_access: Access; append_only: boolean }>;
  member_count: number;
  active_grant_count: number;
}

/** `GET /v1/apps/:id/roles`: every declared custom role, with what it reaches per collection. */
export async function rolesOf(env: Env, app: AppRow): Promise<RoleSummary[]> {
  const manifest = await liveManifest(env, app);
  if (!manifest) return [];
  const names = Object.keys(manifest.roles);
  if (names.length === 0) return [];
  const [counts, grants] = await Promise.all([roleCounts(env, app.id), activeGrantCounts(env, app.id)]);
  return names.map((name) => {
    const role = manifest.roles[name];
    return {
      name,
      label: role.label,
      description: role.description,
      collections: Object.keys(manifest.collections).map((collection) => ({
        name: collection,
        member_access: roleAccess(manifest, collection, name, "member")!,
        grant_access: roleAccess(manifest, collection, name, "grant")!,
        append_only: manifest.collections[collection].appendOnly,
      })),
      member_count: counts.get(name) ?? 0,
      active_grant_count: Object.hasOwn(grants, name) ? grants[name] : 0,
    };
  });
}
