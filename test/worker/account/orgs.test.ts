// Organizations: create (caller first admin and billing account), list, get, rename,
// members add / role / remove. Only admins manage; anyone may leave; the last admin can
// be neither demoted nor removed; billing follows the admins. Non-members see nothing
// (not_found), an agent acts for its human, an unclaimed agent is refused, and every
// refusal leaves the organization's rows as they were.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, claimedAgent, expectError, freshEmail, json, register, signIn, type SignedIn } from "../helpers";

interface Org {
  id: string;
  name: string;
  role: string;
  billing_human_id: string;
  member_count: number;
  created_at: string;
  updated_at: string;
}

interface OrgMember {
  human_id: string;
  email: string;
  role: string;
  created_at: string;
}

async function create(human: SignedIn, name = "Acme"): Promise<Org> {
  return (await json<{ org: Org }>(await call("/v1/orgs", { session: human.session, json: { name } }), 201)).org;
}

async function add(admin: SignedIn, orgId: string, who: SignedIn, role?: string): Promise<OrgMember> {
  const res = await call(`/v1/orgs/${orgId}/members`, { session: admin.session, json: { email: who.email, ...(role ? { role } : {}) } });
  return (await json<{ member: OrgMember }>(res, 201)).member;
}

async function rows(orgId: string) {
  return {
    org: (await env.DB.prepare("SELECT name, billing_human_id, updated_at FROM orgs WHERE id = ?1").bind(orgId).all()).results,
    members: (await env.DB.prepare("SELECT human_id, role, updated_at FROM org_members WHERE org_id = ?1 ORDER BY human_id").bind(orgId).all()).results,
  };
}

describe("creating, listing, reading", () => {
  it("POST 201: I am the admin and the billing account; GET lists it with my role; GET one", async () => {
    const me = await signIn();
    const org = await create(me, "  Acme Research ");
    expect(Object.keys(org).sort()).toEqual(["billing_human_id", "created_at", "id", "member_count", "name", "role", "updated_at"]);
    expect(org).toMatchObject({ name: "Acme Research", role: "admin", billing_human_id: me.humanId, member_count: 1 });
    expect(org.id).toMatch(/^org_/);
    const list = await json<{ items: Org[]; next_cursor: null }>(await call("/v1/orgs", { session: me.session }), 200);
    expect(list).toEqual({ items: [org], next_cursor: null });
    expect((await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { session: me.session }), 200)).org).toEqual(org);
    const members = await json<{ items: OrgMember[] }>(await call(`/v1/orgs/${org.id}/members`, { session: me.session }), 200);
    expect(members.items).toEqual([{ human_id: me.humanId, email: me.email, role: "admin", created_at: org.created_at }]);
  });

  it("an agent acts for its human; an unclaimed agent is 403 agent_not_claimed; no credential 401", async () => {
    const me = await signIn();
    const agent = await claimedAgent(me);
    const org = (await json<{ org: Org }>(await call("/v1/orgs", { key: agent.api_key, json: { name: "By agent" } }), 201)).org;
    expect(org.billing_human_id).toBe(me.humanId);
    expect((await json<{ items: Org[] }>(await call("/v1/orgs", { session: me.session }), 200)).items.map((o) => o.id)).toEqual([org.id]);
    const loose = await register();
    const before = await env.DB.prepare("SELECT count(*) AS n FROM orgs").first("n");
    await expectError(await call("/v1/orgs", { key: loose.api_key, json: { name: "x" } }), 403, "agent_not_claimed");
    await expectError(await call("/v1/orgs", { key: loose.api_key }), 403, "agent_not_claimed");
    await expectError(await call("/v1/orgs", { json: { name: "x" }, origin: API }), 401, "unauthorized");
    await expectError(await call("/v1/orgs", { session: me.session, origin: "https://evil.example", json: { name: "x" } }), 403, "csrf_origin_mismatch");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM orgs").first("n")).toBe(before);
  });

  it("bad names → 400 invalid_request with the field", async () => {
    const me = await signIn();
    for (const body of [{}, { name: "" }, { name: "   " }, { name: "n".repeat(101) }, { name: "a\u0000b" }, { name: 3 }, { name: "ok", extra: true }]) {
      const err = await expectError(await call("/v1/orgs", { session: me.session, json: body }), 400, "invalid_request");
      expect(["name", "extra"]).toContain(err.details?.field);
    }
    expect((await json<{ items: Org[] }>(await call("/v1/orgs", { session: me.session }), 200)).items).toEqual([]);
  });

  it("a non-member gets 404 not_found on every org route, and nothing changes", async () => {
    const me = await signIn();
    const org = await create(me);
    const outsider = await signIn();
    const before = await rows(org.id);
    const path = `/v1/orgs/${org.id}`;
    await expectError(await call(path, { session: outsider.session }), 404, "not_found");
    await expectError(await call(path, { method: "PATCH", session: outsider.session, json: { name: "Mine" } }), 404, "not_found");
    await expectError(await call(`${path}/members`, { session: outsider.session }), 404, "not_found");
    await expectError(await call(`${path}/members`, { session: outsider.session, json: { email: outsider.email } }), 404, "not_found");
    await expectError(await call(`${path}/members/${me.humanId}`, { method: "PATCH", session: outsider.session, json: { role: "member" } }), 404, "not_found");
    await expectError(await call(`${path}/members/${me.humanId}`, { method: "DELETE", session: outsider.session }), 404, "not_found");
    await expectError(await call("/v1/orgs/org_nope", { session: me.session }), 404, "not_found");
    expect(await rows(org.id)).toEqual(before);
    expect((await json<{ items: Org[] }>(await call("/v1/orgs", { session: outsider.session }), 200)).items).toEqual([]);
  });
});

describe("admins manage, members do not", () => {
  it("rename: admin 200; member 403 forbidden and nothing changed", async () => {
    const admin = await signIn();
    const org = await create(admin);
    const plain = await signIn();
    await add(admin, org.id, plain);
    const renamed = (await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { method: "PATCH", session: admin.session, json: { name: "Acme 2" } }), 200)).org;
    expect(renamed).toMatchObject({ name: "Acme 2", member_count: 2 });
    expect(renamed.updated_at >= org.updated_at).toBe(true);
    const before = await rows(org.id);
    await expectError(await call(`/v1/orgs/${org.id}`, { method: "PATCH", session: plain.session, json: { name: "Hijacked" } }), 403, "forbidden");
    await expectError(await call(`/v1/orgs/${org.id}/members`, { session: plain.session, json: { email: freshEmail() } }), 403, "forbidden");
    await expectError(await call(`/v1/orgs/${org.id}/members/${admin.humanId}`, { method: "PATCH", session: plain.session, json: { role: "member" } }), 403, "forbidden");
    await expectError(await call(`/v1/orgs/${org.id}/members/${admin.humanId}`, { method: "DELETE", session: plain.session }), 403, "forbidden");
    expect(await rows(org.id)).toEqual(before);
    // A member may read.
    expect((await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { session: plain.session }), 200)).org.role).toBe("member");
    expect((await json<{ items: OrgMember[] }>(await call(`/v1/orgs/${org.id}/members`, { session: plain.session }), 200)).items).toHaveLength(2);
  });

  it("add by email: 201 (role member by default, or admin); unknown address 404; already a member 409; bad role 400", async () => {
    const admin = await signIn();
    const org = await create(admin);
    const a = await signIn();
    const b = await signIn();
    expect(await add(admin, org.id, a)).toMatchObject({ human_id: a.humanId, email: a.email, role: "member" });
    expect(await add(admin, org.id, b, "admin")).toMatchObject({ human_id: b.humanId, role: "admin" });
    const before = await rows(org.id);
    const unknown = await expectError(await call(`/v1/orgs/${org.id}/members`, { session: admin.session, json: { email: freshEmail("nobody") } }), 404, "not_found");
    expect(unknown.details?.field).toBe("email");
    const again = await expectError(await call(`/v1/orgs/${org.id}/members`, { session: admin.session, json: { email: a.email.toUpperCase(), role: "admin" } }), 409, "conflict");
    expect((again.details?.member as OrgMember).role).toBe("member");
    await expectError(await call(`/v1/orgs/${org.id}/members`, { session: admin.session, json: { email: a.email, role: "owner" } }), 400, "invalid_request");
    await expectError(await call(`/v1/orgs/${org.id}/members`, { session: admin.session, json: { email: "nope" } }), 400, "invalid_request");
    expect(await rows(org.id)).toEqual(before);
    expect((await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { session: a.session }), 200)).org.member_count).toBe(3);
  });
});

describe("roles and the last admin", () => {
  it("the only admin can be neither demoted nor removed (409); with a second admin, either can step down, but not both", async () => {
    const first = await signIn();
    const org = await create(first);
    const path = `/v1/orgs/${org.id}/members`;
    let before = await rows(org.id);
    const demote = await expectError(await call(`${path}/${first.humanId}`, { method: "PATCH", session: first.session, json: { role: "member" } }), 409, "conflict");
    expect(demote.details?.reason).toBe("last_admin");
    await expectError(await call(`${path}/${first.humanId}`, { method: "DELETE", session: first.session }), 409, "conflict");
    expect(await rows(org.id)).toEqual(before);

    const second = await signIn();
    await add(first, org.id, second);
    // Promote, then the first admin steps down: billing moves to the remaining admin.
    expect((await json<{ member: OrgMember }>(await call(`${path}/${second.humanId}`, { method: "PATCH", session: first.session, json: { role: "admin" } }), 200)).member.role).toBe("admin");
    // Setting the role it already has changes nothing.
    expect((await json<{ member: OrgMember }>(await call(`${path}/${second.humanId}`, { method: "PATCH", session: first.session, json: { role: "admin" } }), 200)).member.role).toBe("admin");
    expect((await json<{ member: OrgMember }>(await call(`${path}/${first.humanId}`, { method: "PATCH", session: first.session, json: { role: "member" } }), 200)).member.role).toBe("member");
    expect((await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { session: second.session }), 200)).org.billing_human_id).toBe(second.humanId);
    // Now the second is the last admin.
    before = await rows(org.id);
    await expectError(await call(`${path}/${second.humanId}`, { method: "PATCH", session: second.session, json: { role: "member" } }), 409, "conflict");
    await expectError(await call(`${path}/${second.humanId}`, { method: "DELETE", session: second.session }), 409, "conflict");
    // And the demoted first admin has no say any more.
    await expectError(await call(`${path}/${second.humanId}`, { method: "PATCH", session: first.session, json: { role: "member" } }), 403, "forbidden");
    expect(await rows(org.id)).toEqual(before);
    await expectError(await call(`${path}/${second.humanId}`, { method: "PATCH", session: second.session, json: { role: "boss" } }), 400, "invalid_request");
    await expectError(await call(`${path}/h_unknown`, { method: "PATCH", session: second.session, json: { role: "admin" } }), 404, "not_found");
  });

  it("removal: an admin removes a member (204, idempotent), a member leaves on their own, billing moves when its admin leaves", async () => {
    const owner = await signIn();
    const org = await create(owner);
    const path = `/v1/orgs/${org.id}/members`;
    const a = await signIn();
    const b = await signIn();
    const c = await signIn();
    await add(owner, org.id, a);
    await add(owner, org.id, b);
    await add(owner, org.id, c, "admin");

    expect((await call(`${path}/${a.humanId}`, { method: "DELETE", session: owner.session })).status).toBe(204);
    expect((await call(`${path}/${a.humanId}`, { method: "DELETE", session: owner.session })).status).toBe(204);
    await expectError(await call(`/v1/orgs/${org.id}`, { session: a.session }), 404, "not_found");
    expect((await call(`${path}/${b.humanId}`, { method: "DELETE", session: b.session })).status).toBe(204);
    // The billing admin leaves: billing passes to the other admin.
    expect((await call(`${path}/${owner.humanId}`, { method: "DELETE", session: owner.session })).status).toBe(204);
    const after = (await json<{ org: Org }>(await call(`/v1/orgs/${org.id}`, { session: c.session }), 200)).org;
    expect(after).toMatchObject({ billing_human_id: c.humanId, member_count: 1, role: "admin" });
    expect((await json<{ items: Org[] }>(await call("/v1/orgs", { session: owner.session }), 200)).items).toEqual([]);
  });
});
