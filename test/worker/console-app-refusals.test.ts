// Refusals of the owner console's app and account pages, each the catalogue's error as an
// HTML page with its own status, never a 500 and never a change: a human who does not own
// the app (another owner, a member, a stranger) gets the /v1 routes' app_not_found; a
// cross-site form post gets csrf_origin_mismatch; a bad cursor, a bad q, an unknown
// collection, a bad form field, a trashed app's data pages each get their catalogue code;
// a signed-out visitor is sent to sign in.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, signIn } from "./helpers";
import { member, team, type Team } from "./members/fixtures";

function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

const appPage = (t: Team) => `/console/apps/${t.app.app_id}`;

/** The catalogue code and status of an error page, checked to be an HTML page. */
async function refusal(res: Response, status: number, code: string): Promise<void> {
  const html = await res.text();
  expect(res.status, html).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(html).toContain(`data-error-code="${code}"`);
}

/** Everything a refused page or form could have changed. */
async function appState(appId: string): Promise<unknown> {
  return env.DB.prepare("SELECT status, visibility, share_token_hash, deleted_at FROM apps WHERE id = ?1").bind(appId).first();
}

const GETS = ["", "/collections/notes", "/feed", "/trash", "/purge"];
const POSTS: Array<[string, Array<[string, string]>]> = [
  ["/visibility", [["visibility", "public"]]], ["/share-link/rotate", []], ["/trash", []], ["/restore", []], ["/purge", [["slug", "x"]]],
];

describe("console refusals: not the owner", () => {
  it("another owner, a member and a stranger get app_not_found on every page and form; nothing changes", async () => {
    const t = await team("link");
    const other = await team();
    const friend = await member(t);
    const stranger = await signIn();
    const before = await appState(t.app.app_id);
    for (const who of [other.who.human, friend, stranger]) {
      for (const path of GETS) await refusal(await call(`${appPage(t)}${path}`, { session: who.session }), 404, "app_not_found");
      for (const [path, fields] of POSTS) {
        await refusal(await call(`${appPage(t)}${path}`, { method: "POST", session: who.session, ...form(fields) }), 404, "app_not_found");
      }
    }
    expect(await appState(t.app.app_id)).toEqual(before);
  });

  it("signed out, pages send to sign-in and come back; forms go back to the app's page", async () => {
    const t = await team();
    const rows = await call(`${appPage(t)}/collections/notes?text=a`);
    expect(rows.status).toBe(302);
    expect(rows.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(`${appPage(t)}/collections/notes?text=a`)}`);
    const trash = await call(`${appPage(t)}/trash`, { method: "POST", origin: API, ...form([]) });
    expect(trash.status).toBe(303);
    expect(trash.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(appPage(t))}`);
    expect((await call("/console/account")).headers.get("location")).toBe("/signin?return_to=%2Fconsole%2Faccount");
  });
});

describe("console refusals: cross-site posts", () => {
  it("every form of the app and account pages refuses a foreign Origin (and none) with csrf_origin_mismatch", async () => {
    const t = await team("link");
    const session = t.who.human.session;
    const before = await appState(t.app.app_id);
    const forms: Array<[string, Array<[string, string]>]> = [
      ...POSTS.map(([path, fields]): [string, Array<[string, string]>] => [`${appPage(t)}${path}`, fields]),
      ["/console/account/marketing", [["marketing_consent", "on"]]], ["/account/delete/request", []],
    ];
    for (const [path, fields] of forms) {
      await refusal(await call(path, { method: "POST", session, origin: "https://evil.example", ...form(fields) }), 403, "csrf_origin_mismatch");
      await refusal(await call(path, { method: "POST", session, origin: null, ...form(fields) }), 403, "csrf_origin_mismatch");
    }
    expect(await appState(t.app.app_id)).toEqual(before);
    const profile = await env.DB.prepare("SELECT marketing_consent FROM humans WHERE id = ?1").bind(t.who.human.humanId).first<{ marketing_consent: number }>();
    expect(profile?.marketing_consent).toBeFalsy();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM account_deletions WHERE human_id = ?1").bind(t.who.human.humanId).first<{ n: number }>()).toEqual({ n: 0 });
  });
});

describe("console refusals: bad input", () => {
  it("rows: an unknown collection, a stale or foreign cursor, bad q and oversized text are catalogue errors", async () => {
    const t = await team();
    const session = t.who.human.session;
    const base = `${appPage(t)}/collections`;
    await refusal(await call(`${base}/ghosts`, { session }), 404, "collection_not_found");
    await refusal(await call(`${base}/${"x".repeat(300)}`, { session }), 404, "collection_not_found");
    await refusal(await call(`${base}/notes?after=no-such-row`, { session }), 400, "invalid_request");
    for (const q of ["{", "[]", '{"where": 3}', '{"where": [{"field": "nope", "op": "eq", "value": 1}]}', '{"sort": [{"field": "text", "dir": "up"}]}', '{"limit": 3}']) {
      await refusal(await call(`${base}/notes?q=${encodeURIComponent(q)}`, { session }), 400, "invalid_request");
    }
    await refusal(await call(`${base}/notes?text=${"a".repeat(201)}`, { session }), 400, "invalid_request");
    await refusal(await call(`${base}/notes?q=${encodeURIComponent("x".repeat(8001))}`, { session }), 400, "invalid_request");
  });

  it("feed: a cursor that is not a positive whole number is invalid_request", async () => {
    const t = await team();
    for (const before of ["abc", "0", "-3", "1.5", "1e400"]) {
      await refusal(await call(`${appPage(t)}/feed?before=${before}`, { session: t.who.human.session }), 400, "invalid_request");
    }
    // Past the newest entry is simply the newest page.
    expect((await call(`${appPage(t)}/feed?before=999999`, { session: t.who.human.session })).status).toBe(200);
  });

  it("forms: an unknown visibility or consent value is invalid_request; a trashed app's data pages are soft_deleted", async () => {
    const t = await team();
    const session = t.who.human.session;
    const before = await appState(t.app.app_id);
    for (const fields of [[], [["visibility", "secret"]]] as Array<Array<[string, string]>>) {
      await refusal(await call(`${appPage(t)}/visibility`, { method: "POST", session, ...form(fields) }), 400, "invalid_request");
    }
    await refusal(await call("/console/account/marketing", { method: "POST", session, ...form([["marketing_consent", "maybe"]]) }), 400, "invalid_request");
    await refusal(await call(`${appPage(t)}/visibility`, { method: "POST", session, body: "{}", contentType: "application/json" }), 400, "invalid_request");
    expect(await appState(t.app.app_id)).toEqual(before);

    await call(`${appPage(t)}/trash`, { method: "POST", session, ...form([]) });
    for (const path of ["/collections/notes", "/feed", "/trash"]) await refusal(await call(`${appPage(t)}${path}`, { session }), 410, "soft_deleted");
    await refusal(await call(`${appPage(t)}/visibility`, { method: "POST", session, ...form([["visibility", "public"]]) }), 410, "soft_deleted");
  });
});
