// The access sections of an owned app's console page: grant links (listed without token
// material; minted for a declared custom role with mode, max uses, label, lifetime and an
// optional pin — a row key or a where list — the link shown once on the answering page and
// never in a redirect; revoked) and service credentials (minted explicit or following,
// with an allowlist, carve-outs and the members flag, the token shown once; paused,
// resumed, rotated with an overlap, revoked — each checked against the real endpoints).
// Refusals (a bad pin, an unknown collection or mode among them) re-render the page with
// the schema's or the domain's reason; cross-site posts are 403; another owner's
// app (or a member) gets a 404 page; nothing changes on any refusal.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, json, signIn } from "./helpers";
import { member, team, type Team } from "./members/fixtures";

type Obj = Record<string, unknown>;

function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

/** The app's people and access page (`/console/apps/:id/members`) as `t`'s owner sees it. */
const consoleBase = (t: Team) => `/console/apps/${t.app.app_id}`;
const accessPage = (t: Team) => `${consoleBase(t)}/members`;
async function consolePage(t: Team): Promise<string> {
  return (await call(accessPage(t), { session: t.who.human.session })).text();
}

function post(t: Team, path: string, fields: Array<[string, string]> = [], session = t.who.human.session): Promise<Response> {
  return call(`${consoleBase(t)}${path}`, { method: "POST", session, ...form(fields) });
}

async function grants(t: Team): Promise<Obj[]> {
  return (await json<{ grants: Obj[] }>(await call(`${t.path}/grants`, { key: t.key }), 200)).grants;
}

async function credentials(t: Team): Promise<Obj[]> {
  return (await json<{ credentials: Obj[] }>(await call(`${t.path}/credentials`, { key: t.key }), 200)).credentials;
}

function secretOf(html: string): string {
  const m = /<code id="secret">([^<]+)<\/code>/.exec(html);
  expect(m, html).not.toBeNull();
  return m![1].replace(/&amp;/g, "&");
}

function readNotes(t: Team, token: string): Promise<Response> {
  return call(`${t.path}/collections/notes`, { key: token });
}

async function accessState(appId: string): Promise<unknown> {
  const [g, c] = await Promise.all([
    env.DB.prepare("SELECT * FROM grant_links WHERE app_id = ?1 ORDER BY id").bind(appId).all(),
    env.DB.prepare("SELECT * FROM service_credentials WHERE app_id = ?1 ORDER BY id").bind(appId).all(),
  ]);
  return [g.results, c.results];
}

describe("console: grant links", () => {
  it("lists, mints (link shown once, never in a URL) and revokes", async () => {
    const t = await team();
    const base = consoleBase(t);
    const empty = await consolePage(t);
    expect(empty).toContain('id="no-grants"');
    expect(empty).toContain('<option value="writer">writer</option>');

    const minted = await post(t, "/grants", [["role", "viewer"], ["mode", "multi"], ["max_uses", "5"], ["label", "Reading group"], ["ttl_days", "7"]]);
    expect(minted.status).toBe(201);
    expect(minted.headers.get("location")).toBeNull();
    expect(minted.headers.get("cache-control")).toBe("no-store");
    const url = secretOf(await minted.text());
    expect(url).toMatch(/#g=gr_[0-9a-f]{32}$/);
    expect(url.startsWith(t.app.url)).toBe(true);

    const [g] = await grants(t);
    expect(g).toMatchObject({ role: "viewer", mode: "multi", max_uses: 5, label: "Reading group", active: true, use_count: 0 });
    const ttl = Date.parse(g.expires_at as string) - Date.parse(g.created_at as string);
    expect(Math.abs(ttl - 7 * 86_400_000)).toBeLessThan(5_000);

    const listed = await consolePage(t);
    expect(listed).toContain(`data-grant-id="${g.id}" data-state="active"`);
    expect(listed).toContain("Reading group");
    expect(listed).not.toContain(url.split("#g=")[1]);

    // A once link with defaults: unlimited becomes 1, 30 days.
    const once = await post(t, "/grants", [["role", "writer"], ["mode", "once"], ["max_uses", ""], ["label", ""], ["ttl_days", ""]]);
    expect(once.status).toBe(201);
    const second = (await grants(t)).find((x) => x.role === "writer")!;
    expect(second).toMatchObject({ mode: "once", max_uses: 1, label: null });

    const revoked = await post(t, `/grants/${g.id}/revoke`);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe(`${base}/members?flash=grant-revoked`);
    expect((await grants(t)).find((x) => x.id === g.id)).toMatchObject({ active: false, revoked_at: expect.any(String) });
    const after = await (await call(revoked.headers.get("location")!, { session: t.who.human.session })).text();
    expect(after).toContain("Revoked the grant link.");
    expect(after).toContain(`data-grant-id="${g.id}" data-state="revoked"`);
  });

  it("refusals re-render the page in the grants section and store nothing", async () => {
    const t = await team();
    const before = await accessState(t.app.app_id);
    for (const fields of [
      [["role", "owner"]], [["role", "nobody"]], [["role", "viewer"], ["mode", "sometimes"]], [["role", "viewer"], ["max_uses", "0"]],
      [["role", "viewer"], ["max_uses", "lots"]], [["role", "viewer"], ["ttl_days", "-1"]], [["role", "viewer"], ["label", "a\u0001b"]],
    ] as Array<Array<[string, string]>>) {
      const res = await post(t, "/grants", fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      expect(html).toContain('id="form-error"');
      expect(html.indexOf('id="form-error"')).toBeGreaterThan(html.indexOf('id="grants-heading"'));
      expect(html.indexOf('id="form-error"')).toBeLessThan(html.indexOf('id="credentials-heading"'));
    }
    const unknown = await post(t, "/grants/grant_nope/revoke");
    expect(unknown.status).toBe(404);
    expect(await accessState(t.app.app_id)).toEqual(before);
  });
});

describe("console: service credentials", () => {
  it("mints with an allowlist (token shown once), pauses, resumes, rotates with overlap and revokes", async () => {
    const t = await team();
    const base = consoleBase(t);
    const session = t.who.human.session;
    expect(await (await call(`${base}/members`, { session })).text()).toContain('id="no-credentials"');

    const minted = await post(t, "/credentials", [["label", "Nightly job"], ["ops:notes", "read"], ["ops:notes", "create"], ["own:notes", "1"], ["ops:log", "read"], ["ttl_days", "10"]]);
    expect(minted.status).toBe(201);
    expect(minted.headers.get("location")).toBeNull();
    const token = secretOf(await minted.text());
    expect(token).toMatch(/^svcs_[0-9a-f]{32}$/);
    const [cred] = await credentials(t);
    expect(cred).toMatchObject({
      label: "Nightly job", mode: "explicit", active: true, token_prefix: token.slice(0, 12),
      grants: [{ collection: "notes", ops: ["read", "create"], scope: "own" }, { collection: "log", ops: ["read"] }],
    });
    const ttl = Date.parse(cred.expires_at as string) - Date.parse(cred.created_at as string);
    expect(Math.abs(ttl - 10 * 86_400_000)).toBeLessThan(5_000);
    expect((await readNotes(t, token)).status).toBe(200);
    const page = await (await call(`${base}/members`, { session })).text();
    expect(page).toContain(`data-credential-id="${cred.id}" data-state="active"`);
    expect(page).not.toContain(token);

    const paused = await post(t, `/credentials/${cred.id}/pause`);
    expect(paused.status).toBe(303);
    expect(paused.headers.get("location")).toBe(`${base}/members?flash=credential-paused`);
    expect((await readNotes(t, token)).status).toBe(401);
    expect(await (await call(paused.headers.get("location")!, { session })).text()).toContain(`data-credential-id="${cred.id}" data-state="paused"`);
    expect((await post(t, `/credentials/${cred.id}/resume`)).headers.get("location")).toBe(`${base}/members?flash=credential-resumed`);
    expect((await readNotes(t, token)).status).toBe(200);

    // Rotate with a 2-hour overlap: both tokens work; then with none: only the newest.
    const rotated = await post(t, `/credentials/${cred.id}/rotate`, [["overlap_hours", "2"]]);
    expect(rotated.status).toBe(200);
    const html = await rotated.text();
    const second = secretOf(html);
    expect(html).toContain("The old token keeps working until");
    expect((await readNotes(t, token)).status).toBe(200);
    expect((await readNotes(t, second)).status).toBe(200);
    const third = secretOf(await (await post(t, `/credentials/${cred.id}/rotate`, [["overlap_hours", "0"]])).text());
    expect((await readNotes(t, token)).status).toBe(401);
    expect((await readNotes(t, second)).status).toBe(401);
    expect((await readNotes(t, third)).status).toBe(200);

    const revoked = await post(t, `/credentials/${cred.id}/revoke`);
    expect(revoked.headers.get("location")).toBe(`${base}/members?flash=credential-revoked`);
    expect((await readNotes(t, third)).status).toBe(401);
    // Revoke is permanent: resuming or rotating it is a conflict shown on the page.
    for (const action of ["resume", "rotate"]) {
      const res = await post(t, `/credentials/${cred.id}/${action}`);
      expect(res.status).toBe(409);
      expect(await res.text()).toContain('id="form-error"');
    }

    // No expiry; an empty allowlist is allowed and reaches nothing.
    expect((await post(t, "/credentials", [["no_expiry", "1"]])).status).toBe(201);
    expect((await credentials(t))[0]).toMatchObject({ expires_at: null, grants: [], label: null });
  });

  it("refusals re-render the page in the credentials section and store nothing", async () => {
    const t = await team();
    const before = await accessState(t.app.app_id);
    for (const fields of [
      [["ops:notes", "read"], ["ttl_days", "3"], ["no_expiry", "1"]], [["ops:notes", "admin"]], [["ttl_days", "0"]], [["label", "x".repeat(201)]],
    ] as Array<Array<[string, string]>>) {
      const res = await post(t, "/credentials", fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      expect(html.indexOf('id="form-error"')).toBeGreaterThan(html.indexOf('id="credentials-heading"'));
    }
    for (const action of ["pause", "resume", "rotate", "revoke"]) expect((await post(t, `/credentials/cred_nope/${action}`)).status).toBe(404);
    expect(await accessState(t.app.app_id)).toEqual(before);
  });
});

describe("console: access forms refuse", () => {
  it("cross-site posts, another owner, a member and signed-out visitors, changing nothing", async () => {
    const t = await team();
    const other = await team();
    const friend = await member(t);
    await post(t, "/grants", [["role", "viewer"]]);
    await post(t, "/credentials", [["ops:notes", "read"]]);
    const [g] = await grants(t);
    const [cred] = await credentials(t);
    const before = await accessState(t.app.app_id);
    const paths: Array<[string, Array<[string, string]>]> = [
      ["/grants", [["role", "viewer"]]], [`/grants/${g.id}/revoke`, []], ["/credentials", [["ops:notes", "read"]]],
      [`/credentials/${cred.id}/pause`, []], [`/credentials/${cred.id}/resume`, []], [`/credentials/${cred.id}/rotate`, []], [`/credentials/${cred.id}/revoke`, []],
    ];
    for (const [path, fields] of paths) {
      const forged = await call(`/console/apps/${t.app.app_id}${path}`, { method: "POST", session: t.who.human.session, origin: "https://evil.example", ...form(fields) });
      expect(forged.status, path).toBe(403);
      expect(await forged.text()).toContain('data-error-code="csrf_origin_mismatch"');
      for (const who of [other.who.human, friend]) {
        const res = await post(t, path, fields, who.session);
        expect(res.status, path).toBe(404);
        expect(await res.text()).toContain('data-error-code="app_not_found"');
      }
      const signedOut = await call(`/console/apps/${t.app.app_id}${path}`, { method: "POST", origin: API, ...form(fields) });
      expect(signedOut.status, path).toBe(303);
      expect(signedOut.headers.get("location")).toMatch(/^\/signin\?return_to=/);
    }
    const stranger = await signIn();
    expect((await call(`/console/apps/${t.app.app_id}`, { session: stranger.session })).status).toBe(404);
    expect(await accessState(t.app.app_id)).toEqual(before);
  });
});

/** The refusal shown above a form, unescaped. */
function alertText(html: string): string {
  const m = /id="form-error">([^<]*)<\/p>/.exec(html);
  expect(m, html).not.toBeNull();
  return m![1].replace(/&quot;|&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

describe("console: pins, modes and the members flag", () => {
  it("mints a grant link pinned to a row key or to a where list, and lists the pin", async () => {
    const t = await team();
    const form0 = await consolePage(t);
    expect(form0).toContain('name="pin_row_key"');
    expect(form0).toContain('name="pin_where"');

    const byKey = await post(t, "/grants", [["role", "viewer"], ["label", "One note"], ["pin_row_key", " n1 "], ["pin_where", ""]]);
    expect(byKey.status).toBe(201);
    expect(secretOf(await byKey.text())).toMatch(/#g=gr_[0-9a-f]{32}$/);
    const where = [{ field: "text", op: "eq", value: "hi" }, { field: "tag", op: "in", value: ["a", "b"] }];
    const byWhere = await post(t, "/grants", [["role", "writer"], ["label", "Some notes"], ["pin_row_key", ""], ["pin_where", JSON.stringify(where, null, 2)]]);
    expect(byWhere.status).toBe(201);

    const listed = await grants(t);
    expect(listed.find((g) => g.label === "One note")).toMatchObject({ role: "viewer", pin_row_key: "n1", pin_where: null });
    expect(listed.find((g) => g.label === "Some notes")).toMatchObject({ role: "writer", pin_row_key: null, pin_where: where });
    const page = await consolePage(t);
    expect(page).toContain("row <code>n1</code>");
    expect(page).toMatch(/where <code>text eq (&quot;|&#34;|")hi(&quot;|&#34;|")<\/code> and <code>tag in \[/);
    // A link without a pin says so.
    expect((await post(t, "/grants", [["role", "viewer"], ["label", "Open"]])).status).toBe(201);
    expect((await grants(t)).find((g) => g.label === "Open")).toMatchObject({ pin_row_key: null, pin_where: null });
  });

  it("a bad pin re-renders the page in the grants section with the schema's reason and stores nothing", async () => {
    const t = await team();
    const before = await accessState(t.app.app_id);
    const cases: Array<[Array<[string, string]>, string]> = [
      [[["pin_where", "project = a"]], "pin_where: this is not JSON"],
      [[["pin_where", '[{"field": "text", "op": "like", "value": "a"}]']], "pin.where.0.op"],
      [[["pin_where", '[{"field": "text", "op": "in", "value": "a"}]']], "pin.where.0.value"],
      [[["pin_where", '[{"field": "$.x", "op": "eq", "value": "a"}]']], "pin.where.0.field"],
      [[["pin_where", "[]"]], "pin.where"],
      [[["pin_where", '{"field": "text", "op": "eq", "value": "a"}']], "pin.where"],
      [[["pin_row_key", "n1"], ["pin_where", '[{"field": "text", "op": "eq", "value": "a"}]']], "not both"],
      [[["pin_row_key", "not a key!"]], "pin.row_key"],
    ];
    for (const [fields, reason] of cases) {
      const res = await post(t, "/grants", [["role", "viewer"], ...fields]);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      const at = html.indexOf('id="form-error"');
      expect(at).toBeGreaterThan(html.indexOf('id="grants-heading"'));
      expect(at).toBeLessThan(html.indexOf('id="credentials-heading"'));
      expect(alertText(html), JSON.stringify(fields)).toContain(reason);
    }
    expect(await accessState(t.app.app_id)).toEqual(before);
  });

  it("mints a following credential with member-list access, narrowed and carved out per collection, and lists its mode", async () => {
    const t = await team();
    const empty = await consolePage(t);
    expect(empty).toContain('<option value="following">');
    expect(empty).toContain('id="credential-members"');

    const minted = await post(t, "/credentials", [["label", "Sync"], ["mode", "following"], ["members", "1"], ["ops:notes", "read"], ["none:log", "1"]]);
    expect(minted.status).toBe(201);
    const token = secretOf(await minted.text());
    const [cred] = await credentials(t);
    expect(cred).toMatchObject({
      label: "Sync", mode: "following", members: true, active: true,
      grants: [{ collection: "notes", ops: ["read"] }, { collection: "log", ops: [] }],
    });
    // It reads the member list, reads notes (narrowed to read), and is carved out of log.
    const { members } = await json<{ members: Obj[] }>(await call(`${t.path}/members`, { key: token }), 200);
    expect(members[0]).toMatchObject({ role: "owner" });
    expect((await readNotes(t, token)).status).toBe(200);
    expect((await call(`${t.path}/collections/notes`, { key: token, json: { data: { text: "no" } } })).status).toBe(403);
    expect((await call(`${t.path}/collections/log`, { key: token })).status).toBe(403);

    const page = await consolePage(t);
    expect(page).toContain(`data-credential-id="${cred.id}" data-state="active" data-mode="following" data-members="yes"`);
    expect(page).toContain("follows the owner, except:");
    expect(page).toContain("<code>log</code>: no access");

    // The defaults: explicit, no member list.
    const plain = await post(t, "/credentials", [["label", "Plain"], ["ops:notes", "read"]]);
    const plainToken = secretOf(await plain.text());
    expect((await credentials(t)).find((c) => c.label === "Plain")).toMatchObject({ mode: "explicit", members: false });
    expect((await call(`${t.path}/members`, { key: plainToken })).status).toBe(401);
    expect(await consolePage(t)).toMatch(/data-mode="explicit" data-members="no"/);
  });

  it("refuses an unknown collection, an unknown mode and a contradictory row, in the credentials section, storing nothing", async () => {
    const t = await team();
    const before = await accessState(t.app.app_id);
    const cases: Array<[Array<[string, string]>, string]> = [
      [[["ops:notes", "read"], ["ops:nope", "read"]], 'declares no collection "nope"'],
      [[["mode", "following"], ["none:ghost", "1"]], 'declares no collection "ghost"'],
      [[["mode", "sometimes"], ["ops:notes", "read"]], "mode"],
      [[["ops:log", "read"], ["none:log", "1"]], "not both"],
    ];
    for (const [fields, reason] of cases) {
      const res = await post(t, "/credentials", fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      const at = html.indexOf('id="form-error"');
      expect(at).toBeGreaterThan(html.indexOf('id="credentials-heading"'));
      expect(alertText(html), JSON.stringify(fields)).toContain(reason);
    }
    expect(await accessState(t.app.app_id)).toEqual(before);
  });
});
