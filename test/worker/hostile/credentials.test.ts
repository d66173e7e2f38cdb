// Hostile credentials (issue 16, hostile input 3): every kind of token the relay issues,
// presented tampered (a byte flipped in the signature and in the payload, claims rewritten
// under the old signature, one hex digit of an opaque secret), expired, replayed where it
// is single-use, for the wrong app, as the wrong kind, and after it was revoked, rotated
// or paused. Each is refused with the catalogue envelope and the code spec B / WIRE give
// it (never a 2xx, never a 5xx, never data), no refusal carries a secret, and no secret
// reaches a console line the Worker writes. A last case reads src/ and proves every
// comparison of a secret goes through the one constant-time helper.
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildRequest, call, callWith, claimedAgent, dispatch, json, openLink, requestLink, sessionFrom, signIn, mintClaimCode, register } from "../helpers";
import { appCall, appCallWith } from "../serve/helpers";
import { liveApp, visitor } from "../live/helpers";
import { COLLECTIONS, manifestOf, setup, sibling, type App } from "../access/fixtures";
import { claim as claimTasks, ack, taskApp, tasksIn, withLease, write } from "../tasks/helpers";
import { deployIngest, githubSignature, post } from "../ingest/fixtures";
import { accept as acceptTransfer, offer, setup as accountSetup } from "../account/fixtures";
import { CLIENT_SECRET, oauthBody, setup as connectionSetup, storedRows } from "../connections/fixtures";
import { uploaded, uploader, PNG, sha256 } from "../attachments/helpers";
import { mcpPost } from "../mcp/rpc";
import { REDIRECT_URI, RESOURCE, authorizePath, decide, openApproval, pkce, redirectParams, registerClient, tokenRequest, authorizeAs } from "../mcp/oauth-flow";
import { signJwt, signingKeys } from "../../../src/auth/signing-keys";
import { signVisitor } from "../../../src/auth/visitor-token";
import { sha256Hex } from "../../../src/auth/tokens";
import { decideDeviceCode } from "../../../src/db/codes";
import { failingDb } from "../faults/failing-db";
import { FAKE_IDP_CLIENT_ID, FAKE_IDP_CLIENT_SECRET } from "../../support/fake-oidc-issuer-types";
import { jwtClaims, knownSecrets, leakedIn, recordConsole, refused, remember, tamperedJwts, tamperedSecret, type ConsoleLine } from "./credential-probes";

type Obj = Record<string, any>;

declare global {
  interface ImportMeta {
    /** Vite's build-time glob import (the worker tests are built by Vite); used below to read src/. */
    glob(pattern: string, options: { query: "?raw"; import: "default"; eager: true }): Record<string, string>;
  }
}

let consoleLines: ConsoleLine[] = [];
let restoreConsole = () => {};
beforeAll(() => {
  ({ lines: consoleLines, restore: restoreConsole } = recordConsole());
});
afterAll(() => restoreConsole());

/** An owner app session on `app`, through a one-time test-session token (a sign-in grant). */
async function appSession(app: App): Promise<string> {
  const minted = await json<{ token: string }>(await app.call(`/v1/apps/${app.appId}/test-session-tokens`, { method: "POST" }), 201);
  remember(minted.token);
  return remember((await json<{ token: string }>(await appCall(app.slug, "/_svc/session", { json: { grant: minted.token } }), 200)).token);
}

/** Ages a D1 row's expiry (ISO text) into the past, found by its token hash. */
async function expire(table: string, hashColumn: string, token: string, value: string | number = new Date(Date.now() - 1000).toISOString()): Promise<void> {
  const { meta } = await env.DB.prepare(`UPDATE ${table} SET expires_at = ?1 WHERE ${hashColumn} = ?2`).bind(value, await sha256Hex(token)).run();
  expect(meta.changes, `${table}: no row for the token`).toBe(1);
}

const rows = (app: App) => app.rows("notes");

describe("hostile credentials", { timeout: 60_000 }, () => {
  it("agent keys: tampered, longer, wrong kind, another owner's app, paused, rotated and revoked are refused", async () => {
    const app = await setup();
    const key = remember(app.key);
    remember(app.human.session);
    await json(await call("/v1/keys", { key }), 200);
    const unknown = await refused(await call("/v1/keys", { key: tamperedSecret(key) }), 401, "invalid_api_key", "tampered key");
    expect(unknown.details).toMatchObject({ reason: "unknown" });
    await refused(await call("/v1/keys", { key: `${key}0` }), 401, "invalid_api_key", "longer key");
    await refused(await call("/v1/keys", { key: key.toUpperCase().replace("SVC_", "svc_") }), 401, "invalid_api_key", "upper-case key");
    // Wrong kind: a session token, an app session or a service credential is not an agent key.
    await refused(await call("/v1/keys", { key: app.human.session }), 401, "unauthorized", "session as key");
    const credential = remember((await app.mint({ mode: "following", grants: [] })).token);
    await refused(await call("/v1/keys", { key: credential }), 401, "unauthorized", "credential as key");
    await refused(await call(`/v1/apps/${app.appId}`, { key: await appSession(app) }), 401, "unauthorized", "app session as key");
    // The agent key as a session cookie is no session.
    await refused(await call("/v1/self/agents", { session: key }), 401, "unauthorized", "key as cookie");
    // Another owner's app: not found, as if it never existed.
    const stranger = await setup();
    await refused(await call(`/v1/apps/${stranger.appId}`, { key }), 404, "app_not_found", "key on another owner's app");
    await refused(await appCall(stranger.slug, "/_svc/c/notes", { token: key }), 404, "app_not_found", "key on another owner's app origin");

    const agentPath = `/v1/self/agents/${app.agent.agent_id}`;
    await json(await call(`${agentPath}/pause`, { method: "POST", session: app.human.session }), 200);
    expect((await refused(await call("/v1/keys", { key }), 401, "invalid_api_key", "paused")).details).toMatchObject({ reason: "paused" });
    expect((await refused(await appCall(app.slug, "/_svc/c/notes", { token: key }), 401, "invalid_api_key", "paused on origin")).details).toMatchObject({ reason: "paused" });
    await json(await call(`${agentPath}/resume`, { method: "POST", session: app.human.session }), 200);
    await json(await call("/v1/keys", { key }), 200);

    const rotated = await json<{ api_key: string }>(await call(`${agentPath}/rotate-key`, { method: "POST", session: app.human.session }), 200);
    remember(rotated.api_key);
    expect((await refused(await call("/v1/keys", { key }), 401, "invalid_api_key", "rotated out")).details).toMatchObject({ reason: "revoked" });
    await refused(await call(rows(app), { key }), 401, "invalid_api_key", "rotated out on rows");
    await json(await call("/v1/keys", { key: rotated.api_key }), 200);
    await json(await call(`${agentPath}/revoke-key`, { method: "POST", session: app.human.session }), 200);
    await refused(await call("/v1/keys", { key: rotated.api_key }), 401, "invalid_api_key", "revoked");
    await refused(await call(rows(app), { key: rotated.api_key }), 401, "invalid_api_key", "revoked on rows");
  });

  it("human sessions (relay_session): tampered, expired, logged out and wrong-kind cookies are refused", async () => {
    const human = await signIn();
    const session = remember(human.session);
    await json(await call("/v1/self/agents", { session }), 200);
    await refused(await call("/v1/self/agents", { session: tamperedSecret(session) }), 401, "unauthorized", "tampered session");
    await refused(await call("/v1/self/agents", { session: `${session}0` }), 401, "unauthorized", "longer session");
    // Wrong kind: the session as an agent key.
    await refused(await call("/v1/keys", { key: session }), 401, "unauthorized", "session as key");
    // Expired.
    const other = await signIn();
    remember(other.session);
    await expire("sessions", "token_hash", other.session);
    await refused(await call("/v1/self/agents", { session: other.session }), 401, "unauthorized", "expired session");
    // Logged out.
    expect((await call("/v1/auth/logout", { method: "POST", session })).status).toBeLessThan(400);
    await refused(await call("/v1/self/agents", { session }), 401, "unauthorized", "logged-out session");
    await refused(await call("/v1/self/claim-codes", { method: "POST", session }), 401, "unauthorized", "logged-out session mutating");
  });

  it("magic links work once: a replayed, tampered or expired link signs nobody in", async () => {
    const email = `hostile-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const link = await requestLink(email);
    const token = remember(new URL(link).searchParams.get("token")!);
    const first = await openLink(link);
    expect(first.status).toBe(302);
    expect(sessionFrom(first)).toMatch(/^sess_/);
    remember(sessionFrom(first)!);
    const refusedLink = async (target: string, label: string) => {
      const res = await openLink(target);
      expect(res.status, label).toBe(302);
      expect(res.headers.get("location"), label).toMatch(/\/signin\?error=link_invalid$/);
      expect(sessionFrom(res), label).toBeFalsy();
      expect(leakedIn(await res.text()), label).toEqual([]);
    };
    await refusedLink(link, "replayed link");
    const fresh = await requestLink(email);
    const freshToken = remember(new URL(fresh).searchParams.get("token")!);
    await refusedLink(fresh.replace(freshToken, tamperedSecret(freshToken)), "tampered link");
    await expire("magic_links", "token_hash", freshToken);
    await refusedLink(fresh, "expired link");
    expect(token).not.toBe(freshToken);
  });

  it("claim codes and device codes: replayed, tampered and expired codes are refused", async () => {
    const human = await signIn();
    const first = await register();
    remember(first.api_key);
    const { code } = await mintClaimCode(human);
    remember(code);
    const second = await register();
    remember(second.api_key);
    await refused(await call("/v1/agents/claim", { key: first.api_key, json: { code: tamperedSecret(code) } }), 400, "claim_code_invalid", "tampered claim code");
    await json(await call("/v1/agents/claim", { key: first.api_key, json: { code } }), 200);
    await refused(await call("/v1/agents/claim", { key: second.api_key, json: { code } }), 400, "claim_code_invalid", "replayed claim code");
    const late = remember((await mintClaimCode(human)).code);
    await expire("claim_codes", "code_hash", late);
    await refused(await call("/v1/agents/claim", { key: second.api_key, json: { code: late } }), 400, "claim_code_invalid", "expired claim code");

    // Device codes: tampered, collected twice, expired. The poll interval is reset between polls (it is not what is probed).
    const startDevice = async () => {
      const started = await json<{ device_code: string; user_code: string }>(await call("/v1/device/code", { method: "POST", json: { name: "hostile probe" } }), 200);
      remember(started.device_code);
      return started;
    };
    const poll = async (deviceCode: string) => {
      await env.DB.prepare("UPDATE device_codes SET last_polled_at = NULL WHERE device_code_hash = ?1").bind(await sha256Hex(deviceCode)).run();
      return call("/v1/device/token", { json: { device_code: deviceCode } });
    };
    const device = await startDevice();
    await refused(await poll(tamperedSecret(device.device_code)), 400, "device_code_invalid", "tampered device code");
    expect(await decideDeviceCode(env, device.user_code, human.humanId, true)).toBe(true);
    const collected = await poll(device.device_code);
    expect(collected.status).toBe(200);
    remember((await collected.json<{ agent_key: string }>()).agent_key);
    await refused(await poll(device.device_code), 400, "device_code_invalid", "device code collected twice");
    const lapsed = await startDevice();
    await decideDeviceCode(env, lapsed.user_code, human.humanId, true);
    await env.DB.prepare("UPDATE device_codes SET expires_at = ?1 WHERE user_code = ?2").bind(new Date(Date.now() - 1000).toISOString(), lapsed.user_code).run();
    const expiredPoll = await poll(lapsed.device_code);
    // RFC 8628's string form is the documented answer of the token poll (docs/api.md, conventions).
    expect(expiredPoll.status).toBe(400);
    const expiredText = await expiredPoll.text();
    expect(JSON.parse(expiredText)).toMatchObject({ error: "expired_token" });
    expect(leakedIn(expiredText)).toEqual([]);
  });

  it("service credentials: tampered, wrong app, wrong kind, paused, expired, rotated and revoked are refused", async () => {
    const app = await setup();
    const other = await sibling(app);
    const minted = await app.mint({ mode: "following", grants: [] });
    const token = remember(minted.token);
    await json(await app.withToken(token, rows(app)), 200);
    expect((await refused(await app.withToken(tamperedSecret(token), rows(app)), 401, "unauthorized", "tampered")).details).toMatchObject({ reason: "unknown" });
    await refused(await app.withToken(token, rows(other)), 404, "app_not_found", "another app of the same owner");
    // Wrong kind: the credential on an agent route, on the app origin, as a session cookie.
    await refused(await call("/v1/keys", { key: token }), 401, "unauthorized", "credential on agent route");
    await refused(await call(`/v1/apps/${app.appId}/credentials`, { key: token }), 401, "unauthorized", "credential on credential management");
    await refused(await appCall(app.slug, "/_svc/c/notes", { token }), 401, "unauthorized", "credential on app origin");
    await refused(await mcpPost({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, { key: token }), 401, "oauth_token_invalid", "credential at /mcp");

    const id = minted.id;
    await json(await app.call(`${app.credentials}/${id}/pause`, { method: "POST" }), 200);
    expect((await refused(await app.withToken(token, rows(app)), 401, "unauthorized", "paused")).details).toMatchObject({ reason: "paused" });
    await json(await app.call(`${app.credentials}/${id}/resume`, { method: "POST" }), 200);

    const rotated = await json<{ token: string }>(await app.call(`${app.credentials}/${id}/rotate`, { json: { overlap_seconds: 0 } }), 200);
    remember(rotated.token);
    expect((await refused(await app.withToken(token, rows(app)), 401, "unauthorized", "rotated out")).details).toMatchObject({ reason: expect.stringMatching(/^(expired|unknown|revoked)$/) });
    await json(await app.withToken(rotated.token, rows(app)), 200);
    await env.DB.prepare("UPDATE service_credentials SET expires_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), id).run();
    expect((await refused(await app.withToken(rotated.token, rows(app)), 401, "unauthorized", "expired")).details).toMatchObject({ reason: "expired" });

    const live = await app.mint({ mode: "following", grants: [] });
    remember(live.token);
    expect((await app.call(`${app.credentials}/${live.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    expect((await refused(await app.withToken(live.token, rows(app)), 401, "unauthorized", "revoked")).details).toMatchObject({ reason: "revoked" });
  });

  it("lease credentials: tampered, wrong app, wrong kind and acked leases are refused", async () => {
    const t = await taskApp();
    const other = await taskApp();
    await write(t, "issues", { title: "lease probe" }, "i1");
    await tasksIn(t, "queued");
    const [task] = await claimTasks(t.key, { max: 1 });
    const lease = remember(task.credential);
    await json(await withLease(lease, t.appId, "summaries"), 200);
    await refused(await withLease(tamperedSecret(lease), t.appId, "summaries"), 401, "unauthorized", "tampered lease");
    await refused(await withLease(`${lease}0`, t.appId, "summaries"), 401, "unauthorized", "longer lease");
    await refused(await withLease(lease, other.appId, "summaries"), 404, "app_not_found", "lease on another app");
    await refused(await call("/v1/keys", { key: lease }), 401, "unauthorized", "lease on agent route");
    await refused(await call(`/v1/apps/${t.appId}`, { key: lease }), 401, "unauthorized", "lease on app route");
    await refused(await appCall(t.slug, "/_svc/c/summaries", { token: lease }), 401, "unauthorized", "lease on app origin");
    expect((await ack(t.key, task.task_id)).status).toBe(200);
    await refused(await withLease(lease, t.appId, "summaries"), 401, "unauthorized", "acked lease");
  });

  it("app sessions (JWT): tampered signature and payload, forged claims, alg none, expired, wrong audience, wrong app, wrong kind, lost access", async () => {
    const app = await setup();
    const other = await sibling(app);
    const token = await appSession(app);
    await json(await appCall(app.slug, "/_svc/c/notes", { token }), 200);
    const claims = jwtClaims(token);
    for (const [label, forged] of Object.entries(tamperedJwts(token, { exp: (claims.exp as number) + 3600, app: other.appId }))) {
      await refused(await appCall(app.slug, "/_svc/c/notes", { token: forged }), 401, "unauthorized", label);
      await refused(await appCall(other.slug, "/_svc/c/notes", { token: forged }), 401, "unauthorized", `${label} on the other app`);
    }
    // Wrong app: a valid session of app A on app B.
    await refused(await appCall(other.slug, "/_svc/c/notes", { token }), 401, "unauthorized", "session of another app");
    // Minted through the relay's own signing path: expired, wrong audience, another key.
    const keys = await signingKeys(env)!;
    const now = Math.floor(Date.now() / 1000);
    const good = { app: app.appId, kind: "owner", iat_ms: (now - 7200) * 1000 };
    const expired = remember(await signJwt(keys.session, good, app.human.humanId, "service-app-session", now - 7200, now - 60));
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: expired }), 401, "unauthorized", "expired");
    const audience = remember(await signJwt(keys.session, good, app.human.humanId, "service-visitor", now - 10, now + 3600));
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: audience }), 401, "unauthorized", "wrong audience");
    const visitorKey = remember(await signJwt(keys.visitor, good, app.human.humanId, "service-app-session", now - 10, now + 3600));
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: visitorKey }), 401, "unauthorized", "signed with the visitor key");
    const visitor = await signVisitor(keys, app.appId);
    remember(visitor.token);
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: visitor.token }), 401, "unauthorized", "visitor token as session");
    const stranger = await signIn();
    const outsider = remember(await signJwt(keys.session, { ...good, iat_ms: now * 1000 }, stranger.humanId, "service-app-session", now, now + 3600));
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: outsider }), 401, "unauthorized", "a person with no access");
    // The relay's signing secret rotated: every session signed under the old one stops.
    await refused(await appCallWith({ APP_SESSION_SECRET: `rotated-${crypto.randomUUID()}` }, app.slug, "/_svc/c/notes", { token }), 401, "unauthorized", "signing secret rotated");
    // Wrong kind: the app session on the relay API and at /mcp.
    await refused(await mcpPost({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, { key: token }), 401, "oauth_token_invalid", "app session at /mcp");
    await refused(await call(rows(app), { key: token }), 401, "unauthorized", "app session on the API");
    await refused(await call("/v1/self/agents", { session: token }), 401, "unauthorized", "app session as cookie");

    // Lost access: a member's session stops when they are removed.
    const memberHuman = await signIn();
    remember(memberHuman.session);
    await json(await app.call(`/v1/apps/${app.appId}/members`, { json: { email: memberHuman.email, custom_roles: ["staff"] } }), 201);
    const authorize = await call(`/authorize?app=${app.slug}&return=${encodeURIComponent(`http://${app.slug}.localhost:8787/`)}`, { session: memberHuman.session });
    const grant = remember(/#svc_grant=(sgr_[0-9a-f]{32})$/.exec(authorize.headers.get("location") ?? "")![1]);
    const memberToken = remember((await json<{ token: string }>(await appCall(app.slug, "/_svc/session", { json: { grant } }), 200)).token);
    await json(await appCall(app.slug, "/_svc/c/notes", { token: memberToken }), 200);
    expect((await app.call(`/v1/apps/${app.appId}/members/${memberHuman.humanId}`, { method: "DELETE" })).status).toBeLessThan(300);
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: memberToken }), 401, "unauthorized", "removed member");
  });

  it("sign-in grants (sgr_, test-session tokens): replayed, tampered, another app's and expired grants are grant_invalid", async () => {
    const app = await setup();
    const other = await sibling(app);
    const mint = async () => remember((await json<{ token: string }>(await app.call(`/v1/apps/${app.appId}/test-session-tokens`, { method: "POST" }), 201)).token);
    const grant = await mint();
    await refused(await appCall(app.slug, "/_svc/session", { json: { grant: tamperedSecret(grant) } }), 401, "grant_invalid", "tampered grant");
    await refused(await appCall(other.slug, "/_svc/session", { json: { grant } }), 401, "grant_invalid", "another app's grant");
    remember((await json<{ token: string }>(await appCall(app.slug, "/_svc/session", { json: { grant } }), 200)).token);
    await refused(await appCall(app.slug, "/_svc/session", { json: { grant } }), 401, "grant_invalid", "replayed grant");
    const late = await mint();
    await expire("app_session_grants", "grant_hash", late);
    await refused(await appCall(app.slug, "/_svc/session", { json: { grant: late } }), 401, "grant_invalid", "expired grant");
  });

  it("grant links and grant-holder credentials: tampered, another app's, revoked, expired and spent once-links are grant_invalid", async () => {
    const app = await setup();
    const other = await sibling(app);
    const mintLink = async (body: Obj = {}) => {
      const link = await app.mintGrant({ role: "guest", ...body });
      return { id: link.id, token: remember(/#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1]) };
    };
    const exchange = (slug: string, grant: string, bearer?: string) =>
      appCall(slug, "/_svc/grant", { json: { grant }, ...(bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {}) });
    const link = await mintLink();
    await refused(await exchange(app.slug, tamperedSecret(link.token)), 401, "grant_invalid", "tampered link");
    await refused(await exchange(other.slug, link.token), 401, "grant_invalid", "another app's link");
    const holder = remember((await json<{ token: string }>(await exchange(app.slug, link.token), 200)).token);
    await json(await appCall(app.slug, "/_svc/c/notes", { token: holder }), 200);
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: tamperedSecret(holder) }), 401, "grant_invalid", "tampered holder");
    await refused(await appCall(other.slug, "/_svc/c/notes", { token: holder }), 401, "grant_invalid", "holder on another app");
    await refused(await call(rows(app), { key: holder }), 401, "unauthorized", "holder on the API");

    // A once link is spent by the first browser.
    const once = await mintLink({ max_uses: 1 });
    remember((await json<{ token: string }>(await exchange(app.slug, once.token), 200)).token);
    await refused(await exchange(app.slug, once.token), 401, "grant_invalid", "spent once link");

    // Expired link: its holders stop too.
    const ageing = await mintLink();
    const ageingHolder = remember((await json<{ token: string }>(await exchange(app.slug, ageing.token), 200)).token);
    await env.DB.prepare("UPDATE grant_links SET expires_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), ageing.id).run();
    await refused(await exchange(app.slug, ageing.token), 401, "grant_invalid", "expired link");
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: ageingHolder }), 401, "grant_invalid", "holder of an expired link");

    // Revoked link: the link and its holders stop.
    expect((await app.call(`${app.grants}/${link.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    await refused(await appCall(app.slug, "/_svc/c/notes", { token: holder }), 401, "grant_invalid", "holder of a revoked link");
    await refused(await exchange(app.slug, link.token, holder), 401, "grant_invalid", "revoked link with its holder");
  });

  it("preview tokens and share tokens: tampered, another app's, revoked, expired and rotated are refused", async () => {
    // "board" is readable by anyone, so an admitted anonymous viewer gets rows and a refused one the 401.
    const withBoard = manifestOf({ ...COLLECTIONS, board: { read: ["anyone"], write: ["owner"], delete: ["owner"] } });
    const app = await setup(withBoard);
    const other = await sibling(app, withBoard);
    const minted = await json<{ id: string; token: string }>(await app.call(`/v1/apps/${app.appId}/preview-tokens`, { json: {} }), 201);
    const preview = remember(minted.token);
    await json(await appCall(app.slug, "/_svc/c/board", { share: preview }), 200);
    await refused(await appCall(app.slug, "/_svc/c/board", { share: tamperedSecret(preview) }), 401, "unauthorized", "tampered preview");
    await refused(await appCall(other.slug, "/_svc/c/board", { share: preview }), 401, "unauthorized", "another app's preview");
    await refused(await appCall(app.slug, "/_svc/c/board", { token: preview }), 401, "unauthorized", "preview as bearer");
    await refused(await call(rows(app), { key: preview }), 401, "unauthorized", "preview on the API");
    const ageing = await json<{ id: string; token: string }>(await app.call(`/v1/apps/${app.appId}/preview-tokens`, { json: {} }), 201);
    remember(ageing.token);
    await expire("preview_tokens", "token_hash", ageing.token);
    await refused(await appCall(app.slug, "/_svc/c/board", { share: ageing.token }), 401, "unauthorized", "expired preview");
    expect((await app.call(`/v1/apps/${app.appId}/preview-tokens/${minted.id}`, { method: "DELETE" })).status).toBe(204);
    await refused(await appCall(app.slug, "/_svc/c/board", { share: preview }), 401, "unauthorized", "revoked preview");

    // A link app's share token.
    const linkApp = await json<{ app_id: string; slug: string; share_url: string }>(await call("/v1/apps", { key: app.key, json: { html: "<p>l</p>", manifest: withBoard, visibility: "link" } }), 201);
    const share = remember(/#k=([0-9a-f]+)$/.exec(linkApp.share_url)![1]);
    await json(await appCall(linkApp.slug, "/_svc/c/board", { share }), 200);
    await refused(await appCall(linkApp.slug, "/_svc/c/board", { share: tamperedSecret(share) }), 401, "unauthorized", "tampered share");
    await refused(await appCall(linkApp.slug, "/_svc/c/board", { share: preview }), 401, "unauthorized", "preview as share");
    const rotated = await json<{ share_url: string }>(await call(`/v1/apps/${linkApp.app_id}/share-link/rotate`, { method: "POST", key: app.key, json: {} }), 200);
    remember(/#k=([0-9a-f]+)$/.exec(rotated.share_url)![1]);
    await refused(await appCall(linkApp.slug, "/_svc/c/board", { share }), 401, "unauthorized", "rotated share");
  });

  it("attachment capability tokens and presigned upload URLs: tampered, revoked, expired, spent and replayed are refused", async () => {
    const u = await uploader();
    const ref = await uploaded(u.key);
    const mintCap = async (body: Obj = {}) => json<{ token_id: string; token: string }>(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: u.key, json: body }), 201);
    const cap = await mintCap();
    remember(cap.token);
    expect((await call(`/b/${cap.token}`)).status).toBe(200);
    await refused(await call(`/b/${tamperedSecret(cap.token)}`), 401, "attachment_token_invalid", "tampered capability");
    await refused(await call(rows(await setup()), { key: cap.token }), 401, "unauthorized", "capability as a bearer");
    const once = await mintCap({ once: true });
    remember(once.token);
    expect((await call(`/b/${once.token}`)).status).toBe(200);
    await refused(await call(`/b/${once.token}`), 401, "attachment_token_invalid", "spent once token");
    const ageing = await mintCap();
    remember(ageing.token);
    await expire("attachment_tokens", "token_hash", ageing.token, Date.now() - 1000);
    await refused(await call(`/b/${ageing.token}`), 401, "attachment_token_invalid", "expired capability");
    expect((await call(`/v1/attachments/${ref.attachment_id}/tokens/${cap.token_id}`, { key: u.key, method: "DELETE" })).status).toBeLessThan(300);
    await refused(await call(`/b/${cap.token}`), 401, "attachment_token_invalid", "revoked capability");

    // Presigned upload URLs: the secret is the credential.
    const presign = async () => json<{ attachment_id: string; upload_url: string }>(await call("/v1/attachments/presign", { key: u.key, json: { mime: "image/png", size: PNG.length, sha256: await sha256(PNG) } }), 201);
    const put = (url: string) => call(new URL(url).pathname + new URL(url).search, { method: "PUT", body: PNG, contentType: "image/png" });
    const first = await presign();
    const second = await presign();
    const secret = remember(new URL(first.upload_url).searchParams.get("secret")!);
    remember(new URL(second.upload_url).searchParams.get("secret")!);
    await refused(await put(first.upload_url.replace(secret, tamperedSecret(secret))), 401, "upload_url_invalid", "tampered upload secret");
    await refused(await put(second.upload_url.replace(second.attachment_id, first.attachment_id)), 401, "upload_url_invalid", "another upload's secret");
    expect((await put(first.upload_url)).status).toBe(200);
    await json(await call(`/v1/attachments/${first.attachment_id}/confirm`, { key: u.key, method: "POST" }), 200);
    await refused(await put(first.upload_url), 401, "upload_url_invalid", "replayed upload URL after confirm");
    // A confirm is the agent's own: another owner's agent finds nothing; a second confirm answers the ready attachment as it is.
    const confirmAs = (key: string, id: string) => call(`/v1/attachments/${id}/confirm`, { key, method: "POST" });
    await refused(await confirmAs((await uploader()).key, second.attachment_id), 404, "attachment_not_found", "another agent's confirm");
    const again = await json<{ status: string; attachment_id: string }>(await confirmAs(u.key, first.attachment_id), 200);
    expect(again).toMatchObject({ status: "ready", attachment_id: first.attachment_id });
    // An upload URL past its expiry.
    await env.DB.prepare("UPDATE attachments SET upload_expires_at = ?1 WHERE id = ?2").bind(Date.now() - 1000, second.attachment_id).run();
    await refused(await put(second.upload_url), 401, "upload_url_invalid", "expired upload URL");
  });

  it("inbound hook secrets and signing secrets: tampered, another hook's, rotated and bad signatures are refused", async () => {
    const t = await deployIngest([{ name: "open", collection: "issues", map: { title: "t" } }, { name: "gh", collection: "issues", map: { title: "t" }, verify: { scheme: "github" } }]);
    const other = await deployIngest([{ name: "open", collection: "issues", map: { title: "t" } }]);
    const openHook = await t.hook("open");
    const url = openHook.url;
    const secret = remember(url.split("/").pop()!);
    await json(await post(url, { t: "fine" }), 200);
    await refused(await post(url.replace(secret, tamperedSecret(secret)), { t: "x" }), 404, "ingest_not_found", "tampered hook secret");
    const otherUrl = (await other.hook("open")).url;
    remember(otherUrl.split("/").pop()!);
    await refused(await post(url.replace(secret, otherUrl.split("/").pop()!), { t: "x" }), 404, "ingest_not_found", "another hook's secret");
    await json(await call(`/v1/apps/${t.appId}/ingest-hooks/open/rotate`, { key: t.key, method: "POST", json: {} }), 200);
    remember((await t.hook("open")).url.split("/").pop()!);
    await refused(await post(url, { t: "x" }), 404, "ingest_not_found", "rotated hook secret");

    const gh = (await t.hook("gh")).url;
    remember(gh.split("/").pop()!);
    const signing = remember((await json<{ secret: string }>(await call(`/v1/apps/${t.appId}/ingest-hooks/gh/signing-secret`, { key: t.key, method: "PUT", json: {} }), 200)).secret);
    const body = JSON.stringify({ t: "signed" });
    const good = await githubSignature(signing, body);
    const flipped = good.slice(0, 20) + (good[20] === "0" ? "1" : "0") + good.slice(21);
    await refused(await post(gh, body, { headers: { "x-hub-signature-256": flipped } }), 401, "ingest_signature_invalid", "flipped signature");
    await refused(await post(gh, JSON.stringify({ t: "signed!" }), { headers: { "x-hub-signature-256": good } }), 401, "ingest_signature_invalid", "payload changed under the signature");
    await refused(await post(gh, body, { headers: { "x-hub-signature-256": await githubSignature(tamperedSecret(signing), body) } }), 401, "ingest_signature_invalid", "signed with another secret");
    await json(await post(gh, body, { headers: { "x-hub-signature-256": good } }), 200);
  });

  it("MCP OAuth: tampered and foreign access tokens, a replayed code, a revoked agent are refused", async () => {
    const human = await signIn();
    remember(human.session);
    const agent = await claimedAgent(human, "oauth probe");
    remember(agent.api_key);
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const { tokens } = await authorizeAs(human, agent.agent_id);
    remember(tokens.access_token);
    remember(tokens.refresh_token);
    expect((await mcpPost(list, { key: tokens.access_token })).status).toBe(200);
    const [user, grant, secret] = tokens.access_token.split(":");
    await refused(await mcpPost(list, { key: `${user}:${grant}:${secret.slice(0, -3)}${secret.slice(-3) === "AAA" ? "BBB" : "AAA"}` }), 401, "oauth_token_invalid", "tampered access token");
    await refused(await mcpPost(list, { key: tokens.refresh_token }), 401, "oauth_token_invalid", "refresh token as access token");
    // Wrong kind at /mcp: a session token, a service credential.
    await refused(await mcpPost(list, { key: human.session }), 401, "oauth_token_invalid", "session at /mcp");

    // A code works once.
    const client = await registerClient();
    const { verifier, challenge } = await pkce();
    const page = await openApproval(human, authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" }));
    const code = remember(redirectParams(await decide(human, page, { decision: "approve", agent_id: agent.agent_id })).get("code")!);
    const exchange = () => tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: client.client_id, code_verifier: verifier, resource: RESOURCE });
    const firstUse = await exchange();
    expect(firstUse.status).toBe(200);
    const issued = await firstUse.json<{ access_token: string }>();
    remember(issued.access_token);
    const replay = await exchange();
    expect(replay.status).toBe(400);
    const replayText = await replay.text();
    expect(JSON.parse(replayText).error).toBe("invalid_grant");
    expect(leakedIn(replayText)).toEqual([]);

    await json(await call(`/v1/self/agents/${agent.agent_id}/revoke-key`, { method: "POST", session: human.session }), 200);
    await refused(await mcpPost(list, { key: tokens.access_token }), 401, "oauth_token_invalid", "revoked agent");
  });

  it("asset passes: tampered, another path's and another app's passes open nothing", async () => {
    const app = await setup();
    const other = await sibling(app);
    const keys = await signingKeys(env)!;
    const { mintAssetPass } = await import("../../../src/auth/asset-pass");
    const pass = await mintAssetPass(keys, app.appId, null, "/pic.png");
    remember(pass);
    const [exp, signature] = pass.split(".");
    const flippedSignature = `${exp}.${signature.slice(0, 5)}${signature[5] === "A" ? "B" : "A"}${signature.slice(6)}`;
    const longer = `${(parseInt(exp, 36) + 86_400).toString(36)}.${signature}`;
    for (const [label, probe, slug] of [["flipped signature", flippedSignature, app.slug], ["expiry moved", longer, app.slug], ["another app", pass, other.slug]] as const) {
      const res = await appCall(slug, `/pic.png?svc_pass=${probe}`);
      expect(res.status, label).toBe(401);
      expect(leakedIn(await res.text()), label).toEqual([]);
    }
  });

  it("visitor tokens: a forged, re-signed or another app's token never becomes another visitor (it is ignored, as WIRE §5.2 says)", async () => {
    const { app } = await liveApp();
    const alice = await visitor(app.slug);
    const bob = await visitor(app.slug);
    remember(alice.visitor_token);
    remember(bob.visitor_token);
    const as = (token: string) => ({ headers: { "x-service-visitor": token } });
    await json(await appCall(app.slug, "/_svc/c/mine", { ...as(alice.visitor_token), json: { data: { who: "alice" } } }), 201);
    const keys = await signingKeys(env)!;
    const now = Math.floor(Date.now() / 1000);
    const forgeries: Record<string, string> = {
      ...tamperedJwts(bob.visitor_token, { sub: alice.visitor_id }),
      "signed with the app-session key": await signJwt(keys.session, { app: app.app_id }, alice.visitor_id, "service-visitor", now, now + 3600),
      "expired": await signJwt(keys.visitor, { app: app.app_id }, alice.visitor_id, "service-visitor", now - 7200, now - 60),
      "another app": await signJwt(keys.visitor, { app: `${app.app_id}x` }, alice.visitor_id, "service-visitor", now, now + 3600),
    };
    for (const [label, forged] of Object.entries(forgeries)) {
      remember(forged);
      expect(await json(await appCall(app.slug, "/_svc/session", as(forged)), 200), label).toMatchObject({ kind: "anonymous", visitorId: null });
      await refused(await appCall(app.slug, "/_svc/c/mine", as(forged)), 403, "collection_read_forbidden", `${label}: reading alice's rows`);
    }
  });

  it("identity-provider attempts: a replayed callback, a changed state, another browser, and spoiled ID tokens sign nobody in", async () => {
    const { issuer } = inject("oidcIssuer");
    const idp = { IDP_ISSUER: issuer, IDP_CLIENT_ID: FAKE_IDP_CLIENT_ID, IDP_CLIENT_SECRET: remember(FAKE_IDP_CLIENT_SECRET), IDP_NAME: "Fake IdP" };
    /** One attempt through the fake provider: the callback it sends the browser to, and the attempt cookie. */
    const attempt = async (tamper?: "signature" | "audience" | "expired") => {
      const started = await callWith(idp, "/v1/auth/idp");
      const cookie = /relay_idp_attempt=[^;]+/.exec(started.headers.get("set-cookie") ?? "")![0];
      const login = new URL("/login", issuer);
      new URL(started.headers.get("location")!).searchParams.forEach((value, name) => login.searchParams.set(name, value));
      login.searchParams.set("email", `idp-${crypto.randomUUID().slice(0, 8)}@example.com`);
      login.searchParams.set("verified", "true");
      if (tamper) login.searchParams.set("tamper", tamper);
      const callback = new URL((await fetch(login, { redirect: "manual" })).headers.get("location")!);
      remember(callback.searchParams.get("code")!);
      return { callback, cookie };
    };
    const land = (callback: URL, cookie: string | null) => callWith(idp, callback.pathname + callback.search, { headers: cookie ? { cookie } : {} });
    const signedInNobody = async (res: Response, code: string, label: string) => {
      expect(res.status, label).toBe(302);
      expect(new URL(res.headers.get("location")!, "http://x").searchParams.get("error"), label).toBe(code);
      expect(sessionFrom(res), label).toBeNull();
      expect(leakedIn(await res.text()), label).toEqual([]);
    };
    const good = await attempt();
    const first = await land(good.callback, good.cookie);
    expect(first.status).toBe(302);
    remember(sessionFrom(first)!);
    await signedInNobody(await land(good.callback, good.cookie), "idp_state_invalid", "replayed callback");

    const changed = await attempt();
    const wrongState = new URL(changed.callback);
    wrongState.searchParams.set("state", `${changed.callback.searchParams.get("state")!.slice(0, -2)}xx`);
    await signedInNobody(await land(wrongState, changed.cookie), "idp_state_invalid", "changed state");
    const elsewhere = await attempt();
    await signedInNobody(await land(changed.callback, elsewhere.cookie), "idp_state_invalid", "another browser's attempt cookie");
    for (const tamper of ["signature", "audience", "expired"] as const) {
      const spoiled = await attempt(tamper);
      await signedInNobody(await land(spoiled.callback, spoiled.cookie), "idp_token_invalid", `ID token: ${tamper}`);
    }
  });

  it("feed socket credentials (subprotocol tokens): forged sessions, grant holders, agent keys and share passes are refused before the upgrade", async () => {
    const app = await setup();
    const token = await appSession(app);
    const [forgedSession] = Object.values(tamperedJwts(token, {}));
    const socket = (...protocols: string[]) => appCall(app.slug, "/_svc/ws", { headers: { upgrade: "websocket", "sec-websocket-protocol": ["service.v1", ...protocols].join(", ") } });
    await refused(await socket(`service.session.${forgedSession}`), 401, "unauthorized", "forged session on the socket");
    await refused(await socket(`service.grant.${tamperedSecret(`grh_${"0".repeat(32)}`)}`), 401, "grant_invalid", "forged holder on the socket");
    await refused(await socket(`service.agentkey.${tamperedSecret(app.key)}`), 401, "invalid_api_key", "tampered key on the socket");
    await refused(await socket(`service.share.prv_${"0".repeat(32)}`), 401, "unauthorized", "forged preview on the socket");
    await refused(await socket(), 401, "unauthorized", "no credential on a private app's socket");
  });

  it("member invitations: tampered, spent and someone else's invitations are refused", async () => {
    const app = await setup();
    const email = `invitee-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await json(await app.call(`/v1/apps/${app.appId}/members`, { json: { email } }), 200);
    const mail = await json<{ messages: Array<{ text: string }> }>(await call(`/__dev/mail?to=${encodeURIComponent(email)}`), 200);
    const token = remember(/invite\?token=(inv_[0-9a-f]{32})/.exec(mail.messages[0].text)![1]);
    const invitee = await signIn(email);
    remember(invitee.session);
    const accept = (session: string, presented: string) => call("/v1/self/invites/accept", { session, json: { token: presented } });
    await refused(await accept(invitee.session, tamperedSecret(token)), 410, "gone", "tampered invitation");
    const intruder = await signIn();
    remember(intruder.session);
    await refused(await accept(intruder.session, token), 403, "forbidden", "someone else's invitation");
    await json(await accept(invitee.session, token), 200);
    await refused(await accept(invitee.session, token), 410, "gone", "spent invitation");
  });

  it("app transfer offers: tampered, someone else's and spent transfer links are refused", async () => {
    const s = await accountSetup();
    const recipient = await signIn();
    const { token } = await offer(s, recipient.email);
    remember(token);
    await refused(await acceptTransfer(recipient, tamperedSecret(token)), 410, "gone", "tampered transfer");
    await refused(await acceptTransfer(await signIn(), token), 403, "forbidden", "someone else's transfer");
    await json(await acceptTransfer(recipient, token), 200);
    await refused(await acceptTransfer(recipient, token), 410, "gone", "spent transfer");
  });

  it("connection consent state (oauth2 as a client): a changed, foreign or spent state connects nothing and shows no secret", async () => {
    const s = await connectionSetup();
    remember(CLIENT_SECRET);
    await s.create(oauthBody());
    const session = s.who.human.session;
    const consentState = async () => new URL((await call(`${s.path}/calendar/authorize`, { session })).headers.get("location")!).searchParams.get("state")!;
    const back = (state: string, as: string | undefined = session) => call(`/oauth/connections/callback?code=abc&state=${state}`, as === undefined ? {} : { session: as });
    const page = async (res: Response, status: number, label: string) => {
      const text = await res.text();
      // The callback is a browser page (docs/api.md: text/html with the status saying why), not the JSON envelope.
      expect(res.status, label).toBe(status);
      expect(res.headers.get("content-type"), label).toMatch(/^text\/html/);
      expect(leakedIn(text), label).toEqual([]);
    };
    const state = remember(await consentState());
    await page(await back(tamperedSecret(state)), 400, "changed state");
    await page(await back(state, (await signIn()).session), 403, "another account's state");
    await page(await back(`${state}&error=access_denied`), 400, "declined");
    await page(await back(state), 400, "spent state");
    expect((await storedRows(s.app.app_id))[0].status).toBe("pending_auth");
  });

  it("odd-shaped credentials at every door (oversize, a lone prefix, junk, another scheme, doubled) are 4xx envelopes, never a 500", async () => {
    const app = await setup();
    const big = `svc_${"a".repeat(8000)}`;
    const shapes: Record<string, string> = {
      oversize: big, "oversize JWT": `${"a".repeat(3000)}.${"b".repeat(3000)}.${"c".repeat(3000)}`, "lone prefix": "svc_", dots: "a..b",
      "percent junk": "%00%ff", "three parts of junk": "a.b.c", "upper-case hex": `svc_${"A".repeat(32)}`,
    };
    const doors: Array<[string, (value: string) => Promise<Response>]> = [
      ["API bearer", (value) => call(rows(app), { key: value })],
      ["API other scheme", (value) => call(rows(app), { authorization: `Basic ${value}` })],
      ["API doubled bearer", (value) => call(rows(app), { authorization: `Bearer ${value} Bearer ${value}` })],
      ["session cookie", (value) => call("/v1/self/agents", { headers: { cookie: `relay_session=${value}; relay_session=${app.human.session}` } })],
      ["app-origin bearer", (value) => appCall(app.slug, "/_svc/c/notes", { token: value })],
      ["share header", (value) => appCall(app.slug, "/_svc/c/notes", { share: value })],
      ["grant exchange", (value) => appCall(app.slug, "/_svc/grant", { json: { grant: value.slice(0, 200) } })],
      ["session exchange", (value) => appCall(app.slug, "/_svc/session", { json: { grant: value.slice(0, 200) } })],
      ["capability path", (value) => call(`/b/${encodeURIComponent(value)}`)],
      ["ingest secret", (value) => call(`/v1/ingest/ih_nothing/${encodeURIComponent(value)}`, { method: "POST", json: {} })],
      ["MCP bearer", (value) => mcpPost({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, { key: value })],
      ["claim code", (value) => call("/v1/agents/claim", { key: app.key, json: { code: value.slice(0, 200) } })],
    ];
    const wrong: string[] = [];
    for (const [door, send] of doors) {
      for (const [shape, value] of Object.entries(shapes)) {
        const res = await send(value);
        const text = await res.text();
        let envelope = false;
        try { envelope = Object.keys(JSON.parse(text)).join() === "error"; } catch { /* not JSON */ }
        if (res.status < 400 || res.status >= 500 || !envelope) wrong.push(`${door} × ${shape}: ${res.status} ${text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("secrets sent in failing requests never come back in the refusal", async () => {
    const headerSecret = remember(`Bearer hostile-header-${crypto.randomUUID()}`);
    const clientSecret = remember(`hostile-client-${crypto.randomUUID()}`);
    const app = await setup();
    const connections = `/v1/apps/${app.appId}/connections`;
    const failures: Array<[string, Response]> = [
      ["header value with a newline", await app.call(connections, { json: { name: "crm", allowedHost: "api.example.com", headerName: "Authorization", headerValue: `${headerSecret}\r\nX-Injected: 1` } })],
      ["bad header name beside a secret", await app.call(connections, { json: { name: "crm", allowedHost: "api.example.com", headerName: "Bad Header", headerValue: headerSecret } })],
      ["unknown field beside a secret", await app.call(connections, { json: { name: "crm", allowedHost: "api.example.com", headerName: "Authorization", headerValue: headerSecret, extra: headerSecret } })],
      ["oauth2 with a bad token URL", await app.call(connections, { json: { name: "cal", kind: "oauth2", allowedHost: "*.example.com", authorizeUrl: "https://auth.example.com/authorize", tokenEndpoint: "ftp://auth.example.com/token", clientId: "client-1", clientSecret, scopes: "read" } })],
      ["secret as a wrong-typed field", await app.call(connections, { json: { name: headerSecret, allowedHost: 7, headerName: "Authorization", headerValue: headerSecret } })],
      ["another owner's app", await call(connections, { key: (await claimedAgent(await signIn())).api_key, json: { name: "crm", allowedHost: "api.example.com", headerName: "Authorization", headerValue: headerSecret } })],
      ["an agent key as a claim code", await call("/v1/agents/claim", { key: (await register()).api_key, json: { code: app.key } })],
      ["a signing secret that breaks the rules", await app.call(`/v1/apps/${app.appId}/ingest-hooks/none/signing-secret`, { method: "PUT", json: { secret: `${headerSecret}\u0000` } })],
    ];
    const registrationSecret = remember(`hostile-registration-${crypto.randomUUID()}`);
    const gated = { REGISTRATION_MODE: "secret", REGISTRATION_SECRET: registrationSecret };
    failures.push(["a near-miss registration secret", await callWith(gated, "/v1/register", { authorization: `Bearer ${tamperedSecret(registrationSecret)}`, json: {} })]);
    for (const [label, res] of failures) {
      const text = await res.text();
      expect(res.status, `${label}: ${text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${label}: ${text}`).toBeLessThan(500);
      expect(Object.keys(JSON.parse(text)), label).toEqual(["error"]);
      expect(leakedIn(text), label).toEqual([]);
    }
  });

  it("a database failing while a secret is written (signing secret, hook URL secret, webhook secret) logs no secret", async () => {
    const t = await deployIngest([{ name: "gh", collection: "issues", map: { title: "t" }, verify: { scheme: "github" } }], {
      webhooks: [{ on: "create", collection: "issues", url: "http://127.0.0.1:9/hook" }],
    });
    const chosen = remember(`hostile-signing-${crypto.randomUUID()}`);
    const writes: Array<[string, () => Request]> = [
      ["signing secret set", () => buildRequest(`/v1/apps/${t.appId}/ingest-hooks/gh/signing-secret`, { key: t.key, method: "PUT", json: { secret: chosen } })],
      ["signing secret minted", () => buildRequest(`/v1/apps/${t.appId}/ingest-hooks/gh/signing-secret`, { key: t.key, method: "PUT", json: {} })],
      ["hook URL rotated", () => buildRequest(`/v1/apps/${t.appId}/ingest-hooks/gh/rotate`, { key: t.key, method: "POST", json: {} })],
      ["webhook secret rotated", () => buildRequest(`/v1/apps/${t.appId}/webhook-secret/rotate`, { key: t.key, method: "POST", json: {} })],
    ];
    // Secrets the relay mints here are not known in advance: their shapes are.
    const minted = /ihk_[0-9a-f]{32}|whsec_[A-Za-z0-9_-]{20,}|\b[0-9a-f]{48}\b/;
    const failures: string[] = [];
    for (const [label, request] of writes) {
      // The database fails from the first statement on, then from the second, and so on, until the write goes through.
      for (let allowed = 0; allowed < 12; allowed += 1) {
        const from = consoleLines.length;
        const res = await dispatch(request(), { DB: failingDb(allowed).binding });
        const text = await res.text();
        const lines = consoleLines.slice(from).map((line) => line.text);
        if (leakedIn(text).length > 0 || lines.some((line) => leakedIn(line).length > 0 || minted.test(line))) failures.push(`${label}, database failing after ${allowed} statements: ${lines.filter((line) => leakedIn(line).length > 0 || minted.test(line)).map((line) => line.split("\n").filter((part) => part.includes("params")).join(" ")).join(" | ").slice(0, 300)}`);
        if (res.status < 500) break;
      }
    }
    expect(failures).toEqual([]);
  });

  it("no refusal above carried a secret, and no console line the relay wrote holds one", () => {
    expect(knownSecrets.size).toBeGreaterThan(40);
    // The recording sees the Worker's own lines: the OAuth library logged the replayed code above.
    expect(consoleLines.some((line) => /invalid_grant/.test(line.text))).toBe(true);
    const leaking = consoleLines.filter((line) => leakedIn(line.text).length > 0);
    expect(leaking.map((line) => `${line.level}: ${line.text.slice(0, 300)}`)).toEqual([]);
  });
});

describe("secrets are compared in constant time", () => {
  // Every source file of the Worker, as text (Vite reads them at build time; no file system in workerd).
  const sources = import.meta.glob("../../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true });
  const serverSide = Object.entries(sources).filter(([path]) => !/\/src\/(cli|page-script)\//.test(path));

  it("only the one helper touches timingSafeEqual", () => {
    expect(serverSide.length).toBeGreaterThan(100);
    const direct = serverSide.filter(([path, text]) => /timingSafeEqual\(/.test(text) && !path.endsWith("/src/auth/tokens.ts") && !path.endsWith("worker-env.d.ts")).map(([path]) => path);
    expect(direct).toEqual([]);
  });

  it("no secret, token, hash, signature or verifier is compared with === or !==", () => {
    const SECRETISH = /(?:hash|secret|token|signature|verifier|digest|mac|pass)\b/i;
    const offenders: string[] = [];
    for (const [path, text] of serverSide) {
      text.split("\n").forEach((line, index) => {
        for (const match of line.matchAll(/([\w.$]+(?:\(\))?)\s*(?:===|!==)\s*([\w.$"'`]+)/g)) {
          const [, left, right] = match;
          if (/^(null|undefined|true|false|\d+|["'`].*)$/.test(right) || /^(null|undefined|\d+)$/.test(left)) continue;
          if (/typeof|\.length$|\.byteLength$|\.size$|\.status$|\.kind$/.test(left)) continue;
          const names = [left, right].map((side) => side.replace(/\(\)$/, "").split(".").pop() ?? "");
          if (names.some((name) => SECRETISH.test(name.replace(/([a-z])([A-Z])/g, "$1 $2")))) offenders.push(`${path}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    // Checksums of uploaded or imported bytes are not secrets: the sender chose them.
    const checksums = offenders.filter((entry) => !/sha256 !== (row|entry)\.sha256|listed !== entry\.sha256/.test(entry));
    expect(checksums).toEqual([]);
  });

  it("the helper answers like === and refuses a length mismatch", async () => {
    const { constantTimeEqual } = await import("../../../src/auth/tokens");
    expect(constantTimeEqual("svc_abc", "svc_abc")).toBe(true);
    expect(constantTimeEqual("svc_abc", "svc_abd")).toBe(false);
    expect(constantTimeEqual("svc_abc", "svc_abcd")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("é", "e")).toBe(false);
  });
});

