/**
 * Members and roles (WIRE §2.5, spec A "Access"): add by email (member at once, or a
 * mailed invitation), list (owner first), set or clear custom roles, remove (idempotent;
 * the person's app sessions stop on their next request), and the roles summary. All
 * owner-scoped (agent key or owner session): another owner's app is `app_not_found`, a
 * human who is not a member of this app is `not_found`. The list alone is also open to a
 * service credential of the app minted with `members: true` (spec A's members flag).
 * Adding people and offering transfers is limited per address and per owner per day
 * (`apps/invite-mail-cap.ts`). Member rows are camelCase on the
 * wire (WIRE §1.7) while the request field is `custom_roles`.
 *
 * The signed-in person's side lives here too: accepting an invitation. (The apps they
 * own or joined, `/v1/self/apps`, are in self-apps.ts with their favorite flags.)
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { acceptInvitation, addByEmail, membersOf, removeAppMember, rolesOf, setAppMemberRoles } from "../../apps/members";
import { appUrl } from "../../apps/urls";
import { ownedApp, requireLive } from "./app-access";
import { errors, inviteLimited, isoTime } from "./schemas";

const roleName = z.string().min(1).max(64);
const customRoles = z.array(roleName).max(64);

export const memberSchema = z.object({
  humanId: z.string(), email: z.string(), role: z.enum(["owner", "member"]),
  customRoles: z.array(z.string()).optional(), customRole: z.string().nullable().optional(), createdAt: isoTime,
}).meta({ title: "Member" });

const level = z.enum(["all", "own", "none"]);
const access = z.object({ read: level, create: z.enum(["all", "none"]), update: level, delete: level }).meta({ title: "Access" });

const roleSchema = z.object({
  name: z.string(), label: z.string(), description: z.string().nullable(),
  collections: z.array(z.object({ name: z.string(), member_access: access, grant_access: access, append_only: z.boolean() })),
  member_count: z.number().int(), active_grant_count: z.number().int(),
}).meta({ title: "Role" });

const unavailable = { 503: { description: "auth_provider_unavailable: the relay cannot send mail" } };
const gone = { 410: { description: "soft_deleted: the app is in the trash" } };
const inviteGone = { 410: { description: "gone: the invitation is unknown, spent, replaced by a newer one, or expired (or its app was deleted)" } };

export function memberRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/members", tag: "members", auth: "owner", rateLimit: "invite",
    summary: "Add a person by email: an existing account becomes a member (201; 200 if already one), anyone else is mailed an invitation (7 days, single use); limited per address and, for the mail, per owner per day",
    body: z.strictObject({ email: z.email().max(254), role: z.literal("member").optional(), custom_roles: customRoles.optional() }),
    responses: {
      201: { description: "A new member", schema: z.object({ member: memberSchema }) },
      200: {
        description: "Either `{ member }` (already a member; given custom_roles replace theirs) or `{ ok: true, invited, expires_at }` (an invitation was mailed)",
        schema: z.union([z.object({ member: memberSchema }), z.object({ ok: z.literal(true), invited: z.string(), expires_at: isoTime })]),
      },
      ...errors(400, 401, 403, 404, 409), ...gone, ...inviteLimited, ...unavailable,
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const actor = c.get("actor");
    const result = await addByEmail(c.env, target, {
      email: body.email, roles: body.custom_roles, actor: { humanId: target.ownerHumanId, agentId: actor?.agentId ?? null },
    }, (p) => c.executionCtx.waitUntil(p));
    if (result.kind === "invited") return c.json({ ok: true as const, invited: result.email, expires_at: result.expiresAt });
    return c.json({ member: result.member }, result.created ? 201 : 200);
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/members", tag: "members", auth: "members",
    summary: "The app's owner (role owner, first) and members, oldest first; pending invitations are not members. A service credential of this app minted with members: true may read it too (read only)",
    responses: { 200: { description: "Members", schema: z.object({ members: z.array(memberSchema) }) }, ...errors(401, 403, 404), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ members: await membersOf(c.env, target) });
  });

  defineRoute(app, {
    method: "patch", path: "/v1/apps/:id/members/:humanId", tag: "members", auth: "owner",
    summary: "Set a member's custom roles (declared roles only, at most 8; [] clears); their app sessions stay signed in and see the new roles at once (their open feed sockets are closed with 1012 to reconnect under the new roles)",
    body: z.strictObject({ custom_roles: customRoles }),
    responses: { 200: { description: "The member", schema: z.object({ member: memberSchema }) }, ...errors(400, 401, 403, 404, 409), ...gone },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ member: await setAppMemberRoles(c.env, target, c.req.param("humanId")!, body.custom_roles) });
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id/members/:humanId", tag: "members", auth: "owner",
    summary: "Remove a member (idempotent); their app sessions are refused from their next request and their open feed sockets are closed (1012)",
    responses: { 204: { description: "Not a member (any more)" }, ...errors(401, 403, 404, 409), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    await removeAppMember(c.env, target, c.req.param("humanId")!);
    return c.body(null, 204);
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/roles", tag: "members", auth: "owner",
    summary: "The manifest's custom roles with what each reaches per collection (as a member and through a grant link), computed by the permission engine",
    responses: { 200: { description: "Roles (empty when none is declared)", schema: z.object({ roles: z.array(roleSchema) }) }, ...errors(401, 403, 404), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ roles: await rolesOf(c.env, target) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/self/invites/accept", tag: "members", auth: "human",
    summary: "Accept an app invitation as the signed-in person (the account's address must be the invited one)",
    body: z.strictObject({ token: z.string().min(1).max(200) }),
    responses: {
      200: { description: "Now a member", schema: z.object({ app_id: z.string(), slug: z.string(), url: z.string(), member: memberSchema.nullable() }) },
      ...errors(400, 401, 403), ...inviteGone,
    },
  }, async (c, { body }) => {
    const human = c.get("human");
    const { app: joined, member } = await acceptInvitation(c.env, body.token, { humanId: human.humanId, email: human.email });
    return c.json({ app_id: joined.id, slug: joined.slug, url: appUrl(config(c.env), joined.slug), member });
  });
}
