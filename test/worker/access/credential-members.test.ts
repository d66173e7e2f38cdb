// The service credential's `members` flag (spec A: "member-directory access, default
// off"). With it on, the credential reads its own app's member list, the same
// `{ members }` the owner gets (WIRE §2.5), by id or slug; nothing else opens: adding,
// re-roling and removing members, the roles summary, grants, credentials and transfers
// stay 401 and change nothing. With it off (the default) the list refuses the credential
// exactly as before, the owner routes' 401. Another app (the same owner's or not) is
// app_not_found; a credential that does not hold is 401 with its reason; a trashed app is
// soft_deleted.
import { describe, expect, it } from "vitest";
import { call, expectError, json, signIn } from "../helpers";
import { setup, sibling, unchanged, type Obj } from "./fixtures";
import type { MemberBody } from "../members/fixtures";

type Member = MemberBody;

function membersPath(appRef: string): string {
  return `/v1/apps/${appRef}/members`;
}

describe("a credential with members: true", () => {
  it("reads its app's member list, the owner's very answer, by id or slug", async () => {
    const app = await setup();
    const friend = await signIn();
    await json(await app.call(membersPath(app.appId), { json: { email: friend.email, custom_roles: ["staff"] } }), 201);
    const { token } = await app.mint({ members: true });

    const owners = await json<{ members: Member[] }>(await app.call(membersPath(app.appId)), 200);
    const byId = await json<{ members: Member[] }>(await app.withToken(token, membersPath(app.appId)), 200);
    expect(byId).toEqual(owners);
    expect(Object.keys(byId)).toEqual(["members"]);
    expect(byId.members.map((m) => [m.humanId, m.email, m.role, m.customRoles])).toEqual([
      [app.human.humanId, app.human.email, "owner", []],
      [friend.humanId, friend.email, "member", ["staff"]],
    ]);
    expect(await json(await app.withToken(token, membersPath(app.slug)), 200)).toEqual(owners);
  });

  it("changes nothing: every members write, the roles summary, grants, credentials and transfers stay 401", async () => {
    const app = await setup();
    const friend = await signIn();
    await json(await app.call(membersPath(app.appId), { json: { email: friend.email } }), 201);
    const { token, id } = await app.mint({ mode: "following", members: true, grants: [{ collection: "notes", ops: ["read", "create", "update", "delete"] }] });
    const a = app.appId;
    const refused: Array<[string, string, unknown?]> = [
      ["POST", membersPath(a), { email: "someone@example.com" }],
      ["POST", membersPath(a), { email: friend.email, custom_roles: ["staff"] }],
      ["PATCH", `${membersPath(a)}/${friend.humanId}`, { custom_roles: ["staff"] }],
      ["DELETE", `${membersPath(a)}/${friend.humanId}`],
      ["GET", `/v1/apps/${a}/roles`],
      ["GET", app.credentials],
      ["POST", app.credentials, { members: true }],
      ["POST", `${app.credentials}/${id}/rotate`, {}],
      ["DELETE", `${app.credentials}/${id}`],
      ["GET", app.grants],
      ["POST", app.grants, { role: "staff" }],
      ["GET", `/v1/apps/${a}/transfer`],
      ["POST", `/v1/apps/${a}/transfer`, { email: "someone@example.com" }],
    ];
    const before = await json<{ members: Member[] }>(await app.call(membersPath(a)), 200);
    for (const [method, path, body] of refused) {
      await unchanged(a, async () => {
        const res = await app.withToken(token, path, body === undefined ? { method } : { method, json: body });
        const e = await expectError(res, 401, "unauthorized");
        expect(`${method} ${path} ${e.code}`).toBe(`${method} ${path} unauthorized`);
      });
    }
    expect(await json(await app.call(membersPath(a)), 200)).toEqual(before);
    expect(await json<{ transfer: unknown }>(await app.call(`/v1/apps/${a}/transfer`), 200)).toEqual({ transfer: null });
    expect((await app.credential(id)).active).toBe(true);
  });

  it("reaches its own app only: the same owner's other app and another owner's app are app_not_found", async () => {
    const app = await setup();
    const other = await sibling(app);
    const stranger = await setup();
    const { token } = await app.mint({ members: true });
    for (const ref of [other.appId, other.slug, stranger.appId, "nope"]) {
      const e = await expectError(await app.withToken(token, membersPath(ref)), 404, "app_not_found");
      expect(e.details).toEqual({ app: ref });
    }
  });

  it("a credential that does not hold is 401 with its reason; the app in the trash is soft_deleted", async () => {
    const app = await setup();
    const paused = await app.mint({ members: true });
    await json(await app.call(`${app.credentials}/${paused.id}/pause`, { method: "POST" }), 200);
    const revoked = await app.mint({ members: true });
    await app.call(`${app.credentials}/${revoked.id}`, { method: "DELETE" });
    for (const [token, reason] of [[paused.token, "paused"], [revoked.token, "revoked"], [`svcs_${"0".repeat(32)}`, "unknown"]]) {
      const e = await expectError(await app.withToken(token, membersPath(app.appId)), 401, "unauthorized");
      expect(e.details).toEqual({ reason, credential: "service" });
    }

    const live = await app.mint({ members: true });
    await json(await app.call(`/v1/apps/${app.appId}`, { method: "DELETE" }), 200);
    await expectError(await app.withToken(live.token, membersPath(app.appId)), 410, "soft_deleted");
  });
});

describe("a credential with members: false (the default)", () => {
  it("is refused on the member list exactly as on any owner route: 401 unauthorized, the same envelope", async () => {
    const app = await setup();
    const minted = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    expect(minted.members).toBe(false);
    const explicitOff = await app.mint({ members: false });
    // What any owner route answers a credential (the roles summary is one).
    const ownerRoute = await app.withToken(minted.token, `/v1/apps/${app.appId}/roles`);
    const expected = await expectError(ownerRoute, 401, "unauthorized");
    expect(expected.message).toContain("agent key");
    for (const token of [minted.token, explicitOff.token]) {
      for (const ref of [app.appId, app.slug]) {
        const res = await app.withToken(token, membersPath(ref));
        const e = await expectError(res, 401, "unauthorized");
        expect(e).toEqual(expected);
      }
    }
    // Its collections still work.
    expect((await app.withToken(minted.token, app.rows("notes"))).status).toBe(200);
  });
});

describe("the OpenAPI document", () => {
  it("lists the service credential on the member list only, not on the members writes", async () => {
    const doc = await json<{ paths: Record<string, Record<string, { security: Obj[] }>> }>(await call("/v1/openapi.json"), 200);
    const route = doc.paths["/v1/apps/{id}/members"];
    expect(route.get.security).toEqual([{ agentKey: [] }, { session: [] }, { serviceCredential: [] }]);
    expect(route.post.security).toEqual([{ agentKey: [] }, { session: [] }]);
    expect(doc.paths["/v1/apps/{id}/members/{humanId}"].patch.security).toEqual([{ agentKey: [] }, { session: [] }]);
    expect(doc.paths["/v1/apps/{id}/roles"].get.security).toEqual([{ agentKey: [] }, { session: [] }]);
  });
});
