/**
 * `/v1/orgs*` (spec A "Access"; shapes ours, WIRE §2.13): organizations the caller
 * belongs to, created with the caller as first admin and billing account, renamed and
 * staffed by admins. An agent acts for the human who claimed it (an unclaimed agent gets
 * 403 `agent_not_claimed`). Members are `{ human_id, email, role, created_at }`.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { RelayError } from "../../errors";
import {
  addOrgMember, createOrg, membersOfOrg, orgFor, orgsOf, removeOrgMember, renameOrg, requireAdmin, setOrgRole,
} from "../../account/orgs";
import { errors, isoTime } from "./schemas";

const orgName = z.string().trim().min(1).max(100).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters");
const role = z.enum(["admin", "member"]);

const orgSchema = z.object({
  id: z.string(), name: z.string(), role, billing_human_id: z.string(), member_count: z.number().int(), created_at: isoTime, updated_at: isoTime,
}).meta({ title: "Organization" });
const orgMemberSchema = z.object({ human_id: z.string(), email: z.string(), role, created_at: isoTime }).meta({ title: "OrgMember" });

function me(c: AppContext): string {
  const human = c.get("actor")?.ownerHumanId;
  if (!human) throw new RelayError("agent_not_claimed", "This agent is not claimed by a human yet, so it belongs to no organization.");
  return human;
}

export function orgRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/orgs", tag: "orgs", auth: "owner",
    summary: "Organizations I belong to, with my role (all in one page)",
    responses: { 200: { description: "My organizations", schema: z.object({ items: z.array(orgSchema), next_cursor: z.null() }) }, ...errors(401, 403) },
  }, async (c) => c.json({ items: await orgsOf(c.env, me(c)), next_cursor: null }));

  defineRoute(app, {
    method: "post", path: "/v1/orgs", tag: "orgs", auth: "owner",
    summary: "Create an organization; I am its first admin and its billing account",
    body: z.strictObject({ name: orgName }),
    responses: { 201: { description: "The organization", schema: z.object({ org: orgSchema }) }, ...errors(400, 401, 403, 409) },
  }, async (c, { body }) => c.json({ org: await createOrg(c.env, me(c), body.name) }, 201));

  defineRoute(app, {
    method: "get", path: "/v1/orgs/:id", tag: "orgs", auth: "owner",
    summary: "One organization I belong to (not_found otherwise)",
    responses: { 200: { description: "The organization", schema: z.object({ org: orgSchema }) }, ...errors(401, 403, 404) },
  }, async (c) => c.json({ org: (await orgFor(c.env, me(c), c.req.param("id")!)).view }));

  defineRoute(app, {
    method: "patch", path: "/v1/orgs/:id", tag: "orgs", auth: "owner",
    summary: "Rename the organization (admins only)",
    body: z.strictObject({ name: orgName }),
    responses: { 200: { description: "The organization", schema: z.object({ org: orgSchema }) }, ...errors(400, 401, 403, 404) },
  }, async (c, { body }) => {
    const human = me(c);
    const found = await orgFor(c.env, human, c.req.param("id")!);
    requireAdmin(found.role);
    await renameOrg(c.env, found.org.id, body.name);
    return c.json({ org: (await orgFor(c.env, human, found.org.id)).view });
  });

  defineRoute(app, {
    method: "get", path: "/v1/orgs/:id/members", tag: "orgs", auth: "owner",
    summary: "The organization's members and roles, oldest first (any member may look)",
    responses: { 200: { description: "Members", schema: z.object({ items: z.array(orgMemberSchema), next_cursor: z.null() }) }, ...errors(401, 403, 404) },
  }, async (c) => {
    const found = await orgFor(c.env, me(c), c.req.param("id")!);
    return c.json({ items: await membersOfOrg(c.env, found.org.id), next_cursor: null });
  });

  defineRoute(app, {
    method: "post", path: "/v1/orgs/:id/members", tag: "orgs", auth: "owner",
    summary: "Add an existing account by email (admins only); role defaults to member. No account with that address: not_found; already a member: conflict",
    body: z.strictObject({ email: z.email().max(254), role: role.optional() }),
    responses: { 201: { description: "The new member", schema: z.object({ member: orgMemberSchema }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c, { body }) => {
    const found = await orgFor(c.env, me(c), c.req.param("id")!);
    requireAdmin(found.role);
    return c.json({ member: await addOrgMember(c.env, found.org.id, body.email, body.role ?? "member") }, 201);
  });

  defineRoute(app, {
    method: "patch", path: "/v1/orgs/:id/members/:humanId", tag: "orgs", auth: "owner",
    summary: "Set a member's organization role (admins only); the last admin cannot be demoted (conflict)",
    body: z.strictObject({ role }),
    responses: { 200: { description: "The member", schema: z.object({ member: orgMemberSchema }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c, { body }) => {
    const found = await orgFor(c.env, me(c), c.req.param("id")!);
    requireAdmin(found.role);
    return c.json({ member: await setOrgRole(c.env, found.org.id, c.req.param("humanId")!, body.role) });
  });

  defineRoute(app, {
    method: "delete", path: "/v1/orgs/:id/members/:humanId", tag: "orgs", auth: "owner",
    summary: "Remove a member (admins only; anyone may remove themselves; idempotent); the last admin cannot be removed (conflict)",
    responses: { 204: { description: "Not a member (any more)" }, ...errors(401, 403, 404, 409) },
  }, async (c) => {
    const human = me(c);
    const found = await orgFor(c.env, human, c.req.param("id")!);
    const target = c.req.param("humanId")!;
    if (target !== human) requireAdmin(found.role);
    await removeOrgMember(c.env, found.org.id, target);
    return c.body(null, 204);
  });
}
