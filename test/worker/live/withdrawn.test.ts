// Feed sockets stop when the access behind them is withdrawn. A socket keeps the principal
// it connected with, so each way of taking access away must reach the open socket too:
// revoking a grant link or a preview token closes the sockets it let in (1012), their
// expiry closes them (4001) before anything newer is sent; removing a member through the
// console closes their sockets like the API does; re-roling a member closes their sockets
// (1012) so the reconnect, with the same session, sees with the new roles; and a session
// issued before a removal stays dead when the person is re-added within the same second.
// Each case writes a row the socket could read before, and shows it never arrives.
import { env, runInDurableObject } from "cloudflare:test";
import type { AppStore } from "../../../durable-objects/app-store/contract";
import { describe, expect, it } from "vitest";
import { call, json, type SignedIn } from "../helpers";
import { appCall } from "../serve/helpers";
import { member, rolesManifest, team as rolesTeam, type Team } from "../members/fixtures";
import { setGrantColumn, setup, type App } from "../access/fixtures";
import { agentCreate, liveApp, Socket, type Frame, socketsClosedAfterEach, ownerToken, sessionProtocols as session, grantProtocols as grant, shareProtocols as share } from "./helpers";
import { issuedBeforeMembership } from "../../../src/auth/app-access";
import { stageWithdrawal } from "../withdrawals";
import { clockPast } from "../../support/wait";

const sockets = socketsClosedAfterEach();

const subscribed = sockets.subscribed;



function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

/** The entries (from `entry` and `batch` frames) among `frames`. */
function entriesIn(frames: Frame[]): Array<{ collection_name: string; data: Record<string, unknown> }> {
  return frames.flatMap((f) => (f.type === "entry" ? [f.entry] : f.type === "batch" ? (f.entries as unknown[]) : [])) as Array<{ collection_name: string; data: Record<string, unknown> }>;
}

/** Waits for `socket` to close with `code`; it must have received no row at all. */
async function closedWithNothing(socket: Socket, code: number): Promise<void> {
  expect((await socket.whenClosed()).code).toBe(code);
  expect(entriesIn(socket.frames)).toEqual([]);
}

/** A time wait: until the wall clock is past the expiry `iso` (plus a margin). */
async function until(iso: string, margin = 50): Promise<void> {
  await clockPast(Date.parse(iso) + margin);
}

async function refused(slug: string, protocols: string[]): Promise<number> {
  const again = await Socket.open(slug, protocols);
  if (again instanceof Socket) {
    again.close();
    throw new Error("the reconnect was accepted");
  }
  return again.status;
}

describe("grant links", () => {
  async function holderOf(app: App, link: { grant_url: string }): Promise<string> {
    const token = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
    return (await json<{ token: string }>(await appCall(app.slug, "/_svc/grant", { json: { grant: token } }), 200)).token;
  }

  it("revoking a link closes every holder's socket (1012) before the next row; other links' holders keep streaming", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "guest" });
    const [first, second] = [await holderOf(app, link), await holderOf(app, link)];
    const otherHolder = await holderOf(app, await app.mintGrant({ role: "guest" }));
    const a = await subscribed(app.slug, grant(first));
    const b = await subscribed(app.slug, grant(second));
    const other = await subscribed(app.slug, grant(otherHolder));

    expect((await app.call(`${app.grants}/${link.id}`, { method: "DELETE" })).status).toBe(200);
    await closedWithNothing(a, 1012);
    await closedWithNothing(b, 1012);

    await app.create("notes", { text: "after the revoke" });
    expect(await other.next()).toMatchObject({ type: "entry", entry: { collection_name: "notes", data: { text: "after the revoke" } } });
    expect(entriesIn(a.frames)).toEqual([]);
    expect(await refused(app.slug, grant(first))).toBe(401);
    expect(other.closed).toBeNull();
  });

  /** A holder watching through a link that expires in 1.2 s, beside the owner's agent watching too. */
  async function expiringHolder() {
    const app = await setup();
    const link = await app.mintGrant({ role: "guest" });
    const token = await holderOf(app, link);
    const expiresAt = new Date(Date.now() + 1200).toISOString();
    await setGrantColumn(link.id, "expires_at", expiresAt);
    const socket = await subscribed(app.slug, grant(token));
    const agent = await subscribed(app.slug, ["service.v1", `service.agentkey.${app.key}`]);
    return { app, token, expiresAt, socket, agent };
  }

  it("a link's expiry closes its holder's socket (4001) instead of sending the next row", async () => {
    const { app, token, expiresAt, socket, agent } = await expiringHolder();

    await until(expiresAt);
    await app.create("notes", { text: "after the expiry" });
    expect(await agent.next()).toMatchObject({ type: "entry" });
    expect(await socket.next()).toMatchObject({ type: "error", error: { code: "unauthorized" } });
    await closedWithNothing(socket, 4001);
    expect(await refused(app.slug, grant(token))).toBe(401);
  });

  it("an idle holder's socket is closed (4001) when its link expires, with no write to prompt it", async () => {
    const { app, expiresAt, socket, agent } = await expiringHolder();

    expect(await socket.next(4000)).toMatchObject({ type: "error", error: { code: "unauthorized" } });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    await closedWithNothing(socket, 4001);
    // The agent's socket, which does not expire, is left alone.
    await app.create("notes", { text: "after the expiry" });
    expect(await agent.next()).toMatchObject({ type: "entry" });
    expect(agent.closed).toBeNull();
  });
});

describe("preview tokens", () => {
  async function previewApp() {
    const { who, app } = await liveApp("private");
    const mint = async (): Promise<{ id: string; token: string; expires_at: string }> =>
      json(await call(`/v1/apps/${app.app_id}/preview-tokens`, { key: who.agent.api_key, json: {} }), 201);
    return { who, app, mint };
  }

  it("revoking a token closes the sockets it let in (1012) before the next row; another token's viewers keep streaming", async () => {
    const { who, app, mint } = await previewApp();
    const revoked = await mint();
    const kept = await mint();
    const socket = await subscribed(app.slug, share(revoked.token));
    const other = await subscribed(app.slug, share(kept.token));

    expect((await call(`/v1/apps/${app.app_id}/preview-tokens/${revoked.id}`, { method: "DELETE", key: who.agent.api_key })).status).toBe(204);
    await closedWithNothing(socket, 1012);

    await agentCreate(who.agent.api_key, app.app_id, "notes", { text: "after the revoke" });
    expect(await other.next()).toMatchObject({ type: "entry", entry: { collection_name: "notes" } });
    expect(entriesIn(socket.frames)).toEqual([]);
    expect(await refused(app.slug, share(revoked.token))).toBe(401);
  });

  it("a token's expiry closes its viewer's socket (4001) instead of sending the next row", async () => {
    const { who, app, mint } = await previewApp();
    const minted = await mint();
    const expiresAt = new Date(Date.now() + 1200).toISOString();
    await env.DB.prepare("UPDATE preview_tokens SET expires_at = ?1 WHERE id = ?2").bind(expiresAt, minted.id).run();
    const socket = await subscribed(app.slug, share(minted.token));

    await until(expiresAt);
    await agentCreate(who.agent.api_key, app.app_id, "notes", { text: "after the expiry" });
    expect(await socket.next()).toMatchObject({ type: "error", error: { code: "unauthorized" } });
    await closedWithNothing(socket, 4001);
    expect(await refused(app.slug, share(minted.token))).toBe(401);
  });

  it("idle viewers are closed (4001) at their own tokens' expiries, the sooner one first", async () => {
    const { app, mint } = await previewApp();
    const [soon, later] = [await mint(), await mint()];
    const expiry = (ms: number) => new Date(Date.now() + ms).toISOString();
    const [soonAt, laterAt] = [expiry(1000), expiry(2200)];
    await env.DB.prepare("UPDATE preview_tokens SET expires_at = ?1 WHERE id = ?2").bind(soonAt, soon.id).run();
    await env.DB.prepare("UPDATE preview_tokens SET expires_at = ?1 WHERE id = ?2").bind(laterAt, later.id).run();
    const first = await subscribed(app.slug, share(later.token));
    const second = await subscribed(app.slug, share(soon.token));

    await closedWithNothing(second, 4001);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soonAt));
    expect(first.closed).toBeNull();
    expect((await first.whenClosed(4000)).code).toBe(4001);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(laterAt));
  });
});

/** The members tests' app (notes: read by members; log: read by viewers), with the owner writing both. */
function team(): Promise<Team> {
  const manifest = rolesManifest() as { "x-service-manifest": { collections: Record<string, { write: string[] }> } };
  for (const c of Object.values(manifest["x-service-manifest"].collections)) c.write = ["owner", ...c.write];
  return rolesTeam("private", manifest);
}

describe("members", () => {
  const note = (t: Team, text: string) => agentCreate(t.key, t.app.app_id, "notes", { text });
  const logLine = (t: Team, line: string) => agentCreate(t.key, t.app.app_id, "log", { line });

  it("removing a member through the console closes their socket (1012) before the next row", async () => {
    const t = await team();
    const friend = await member(t, ["viewer"]);
    const other = await member(t, ["viewer"]);
    const token = await ownerToken(friend, t.app.slug);
    const socket = await subscribed(t.app.slug, session(token));
    const stays = await subscribed(t.app.slug, session(await ownerToken(other, t.app.slug)));

    const res = await call(`/console/apps/${t.app.app_id}/members/${friend.humanId}/remove`, { method: "POST", session: t.who.human.session, ...form([]) });
    expect(res.status).toBe(303);
    await closedWithNothing(socket, 1012);

    await note(t, "after the removal");
    expect(await stays.next()).toMatchObject({ type: "entry", entry: { collection_name: "notes" } });
    expect(entriesIn(socket.frames)).toEqual([]);
    expect(await refused(t.app.slug, session(token))).toBe(401);
  });

  for (const [how, reRole] of [
    ["PATCH /v1/apps/:id/members/:humanId", async (t: Team, friend: SignedIn) => {
      await json(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: [] } }), 200);
    }],
    ["the console's roles form", async (t: Team, friend: SignedIn) => {
      const res = await call(`/console/apps/${t.app.app_id}/members/${friend.humanId}/roles`, { method: "POST", session: t.who.human.session, ...form([]) });
      expect(res.status).toBe(303);
    }],
    ["adding the member again with roles", async (t: Team, friend: SignedIn) => {
      await json(await call(`${t.path}/members`, { key: t.key, json: { email: friend.email, custom_roles: [] } }), 200);
    }],
  ] as Array<[string, (t: Team, friend: SignedIn) => Promise<void>]>) {
    it(`re-roling a member (${how}) closes their socket with 1012; the reconnect with the same session sees only what the new roles allow`, async () => {
      const t = await team();
      const friend = await member(t, ["viewer"]);
      await note(t, "before");
      await logLine(t, "before");
      const token = await ownerToken(friend, t.app.slug);
      // As a viewer: notes (read: member) and the log (read: viewer).
      const { socket: first, batch } = await Socket.subscribed(t.app.slug, session(token));
      sockets.keep(first);
      expect(entriesIn([batch]).map((e) => e.collection_name).sort()).toEqual(["log", "notes"]);

      await reRole(t, friend);
      await closedWithNothing(first, 1012);
      await logLine(t, "after the re-role");
      expect(entriesIn(first.frames)).toEqual([]);

      // The same session, reconnected: a plain member reads notes but no longer the log.
      const { socket: again, hello, batch: page } = await Socket.resubscribed(t.app.slug, session(token));
      sockets.keep(again);
      expect(hello).toMatchObject({ session: { kind: "member", humanId: friend.humanId } });
      expect(entriesIn([page]).map((e) => e.collection_name)).toEqual(["notes"]);
      await logLine(t, "later");
      await note(t, "later");
      const next = await again.next();
      expect(next).toMatchObject({ type: "entry", entry: { collection_name: "notes", data: { text: "later" } } });
      await again.quiet(200);
    });
  }

  it("a session issued before a removal stays refused when the member is re-added within the same second", async () => {
    const t = await team();
    const friend = await member(t, ["viewer"]);
    const old = await ownerToken(friend, t.app.slug);
    const socket = await subscribed(t.app.slug, session(old));

    await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
    await closedWithNothing(socket, 1012);
    await json(await call(`${t.path}/members`, { key: t.key, json: { email: friend.email, custom_roles: ["viewer"] } }), 201);
    // Pin the re-add into the second the old session was issued in, just after it was
    // issued (the same millisecond if it was issued in the second's last one): with
    // whole-second times the old session would look as new as the membership.
    const claims = JSON.parse(atob(old.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))) as { iat: number; iat_ms: number };
    expect(Math.floor(claims.iat_ms / 1000)).toBe(claims.iat);
    const readdedMs = Math.min(claims.iat_ms + 1, claims.iat * 1000 + 999);
    await env.DB.prepare("UPDATE app_members SET created_at = ?1 WHERE app_id = ?2 AND human_id = ?3")
      .bind(new Date(readdedMs).toISOString(), t.app.app_id, friend.humanId).run();

    expect(await refused(t.app.slug, session(old))).toBe(401);
    expect((await appCall(t.app.slug, "/_svc/session", { token: old })).status).toBe(401);
    expect((await appCall(t.app.slug, "/_svc/c/notes", { token: old })).status).toBe(401);
    await note(t, "after the re-add");
    expect(entriesIn(socket.frames)).toEqual([]);

    // A sign-in after the re-add works, and its socket gets the next row.
    const fresh = await ownerToken(friend, t.app.slug);
    const watcher = await subscribed(t.app.slug, session(fresh));
    await note(t, "for the new session");
    expect(await watcher.next()).toMatchObject({ type: "entry", entry: { data: { text: "for the new session" } } });
  });

  it("a session is older than a membership unless issued strictly after it, to the millisecond", () => {
    const created = "2026-11-22T10:00:00.500Z";
    const at = Date.parse(created);
    expect(issuedBeforeMembership(at - 1, created)).toBe(true);
    expect(issuedBeforeMembership(at, created)).toBe(true);
    expect(issuedBeforeMembership(at + 1, created)).toBe(false);
    // Whole seconds would have called this session (issued at .100, same second) as new as the membership.
    expect(issuedBeforeMembership(Date.parse("2026-11-22T10:00:00.100Z"), created)).toBe(true);
  });
});

describe("a withdrawal racing an upgrade", () => {
  // The Worker checks an upgrade's access in D1, then hands it to the store. A withdrawal
  // that lands between the two closes the sockets the store has, not this one still in
  // flight; the store remembers the close and turns such a socket away (1012). The race is
  // staged by recording the withdrawal as the store would, timed after the Worker's check.
  it("a socket whose access was checked before a matching withdrawal is closed (1012) on arrival, before hello", async () => {
    const t = await team();
    const [friend, other] = [await member(t, ["viewer"]), await member(t, ["viewer"])];
    const [token, otherToken] = [await ownerToken(friend, t.app.slug), await ownerToken(other, t.app.slug)];
    await stageWithdrawal(t.app.app_id, Date.now() + 2_000, { humanId: friend.humanId });

    const raced = await Socket.connect(t.app.slug, session(token));
    sockets.keep(raced);
    expect((await raced.whenClosed()).code).toBe(1012);
    expect(raced.frames).toEqual([]);
    // Someone else's socket is not touched by that withdrawal.
    await subscribed(t.app.slug, session(otherToken));
  });

  it("a close of every socket turns away every upgrade checked before it; one checked after is served", async () => {
    const t = await team();
    const friend = await member(t, ["viewer"]);
    const token = await ownerToken(friend, t.app.slug);
    await stageWithdrawal(t.app.app_id, Date.now() - 1_000, null);
    // Recorded before this upgrade's check: served.
    const fine = await subscribed(t.app.slug, session(token));
    expect(fine.closed).toBeNull();

    await stageWithdrawal(t.app.app_id, Date.now() + 2_000, null);
    for (const protocols of [session(token), ["service.v1", `service.agentkey.${t.key}`]]) {
      const raced = await Socket.connect(t.app.slug, protocols);
      sockets.keep(raced);
      expect((await raced.whenClosed()).code).toBe(1012);
      expect(raced.frames).toEqual([]);
    }
  });

  it("a real withdrawal is remembered for a minute and only then forgotten", async () => {
    const t = await team();
    const friend = await member(t, ["viewer"]);
    const store = env.APP_STORE.get(env.APP_STORE.idFromName(t.app.app_id));
    const rows = () => runInDurableObject(store, (_instance: AppStore, state) =>
      state.storage.sql.exec<{ at: number; selector: string | null }>("SELECT at, selector FROM _svc_withdrawals ORDER BY at").toArray());
    await stageWithdrawal(t.app.app_id, Date.now() - 61_000, { humanId: "old" });
    expect((await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key })).status).toBe(204);
    const kept = await rows();
    expect(kept).toHaveLength(1);
    expect(JSON.parse(kept[0].selector!)).toEqual({ humanId: friend.humanId });
    expect(Math.abs(kept[0].at - Date.now())).toBeLessThan(5_000);
  });
});
