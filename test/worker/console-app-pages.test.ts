// The owner console's app pages, driven like a browser without JavaScript: the app's page
// (name, slug, version, visibility, disclosure, collections), changing the visibility and
// rotating the share link (the link shown once on the answering page, never in a redirect),
// a collection's rows newest first with paging to the end, search and the API's q, the
// live feed newest first with paging, the trash (trash, restore, purge with the slug
// typed), the account page with the marketing toggle, and /account/delete opened bare.
// Each is checked against what the /v1 API then answers.
import { describe, expect, it } from "vitest";
import { call, json } from "./helpers";
import { team, type Team } from "./members/fixtures";

type Obj = Record<string, unknown>;

function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

/** Notes members read and the owner (or its agent) and members write; an append-only log. */
const CONSOLE_MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
  "x-service-manifest": {
    app: { name: "Team board", description: "Notes for the team" },
    collections: {
      notes: { schema: { $ref: "#/$defs/Note" }, read: ["member"], write: ["owner", "member"], delete: ["owner"] },
      log: { read: ["member"], write: ["owner"], delete: ["owner"], appendOnly: true },
    },
  },
};

const consoleTeam = (visibility = "private") => team(visibility, CONSOLE_MANIFEST);
const appPage = (t: Team) => `/console/apps/${t.app.app_id}`;

async function page(path: string, session: string, status = 200): Promise<string> {
  const res = await call(path, { session });
  const html = await res.text();
  expect(res.status, html).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  return html;
}

function post(path: string, session: string, fields: Array<[string, string]> = []): Promise<Response> {
  return call(path, { method: "POST", session, ...form(fields) });
}

/** Writes `n` notes as the agent, oldest first; answers their keys in that order. */
async function writeNotes(t: Team, n: number, text = (i: number) => `note ${i}`): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({ data: { text: text(i) } }));
  const res = await json<{ results: Array<{ key: string }> }>(await call(`${t.path}/collections/notes/batch`, { key: t.key, json: { rows } }), 200);
  return res.results.map((r) => r.key);
}

function rowKeys(html: string): string[] {
  return [...html.matchAll(/<tr data-key="([^"]+)">/g)].map((m) => m[1]);
}

function nextHref(html: string): string | null {
  const m = /id="next-page" rel="next" href="([^"]+)"|href="([^"]+)" id="next-page"/.exec(html);
  return m ? (m[1] ?? m[2]).replace(/&amp;/g, "&") : null;
}

function secretOf(html: string): string {
  const m = /<code id="secret">([^<]+)<\/code>/.exec(html);
  expect(m, html).not.toBeNull();
  return m![1].replace(/&amp;/g, "&");
}

async function detail(t: Team, query = ""): Promise<Obj> {
  return json<Obj>(await call(`${t.path}${query}`, { key: t.key }), 200);
}

describe("console: an app's page", () => {
  it("shows the name, slug, live version, visibility, disclosure and links to open the app, its rows and its feed", async () => {
    const t = await consoleTeam();
    const html = await page(appPage(t), t.who.human.session);
    expect(html).toContain("<h1>Team board</h1>");
    expect(html).toContain('<p id="app-description">Notes for the team</p>');
    expect(html).toContain(`<dd data-fact="slug"><code>${t.app.slug}</code></dd>`);
    expect(html).toContain('<dd data-fact="version">1</dd>');
    expect(html).toContain('<dd data-fact="visibility">private</dd>');
    expect(html).toContain(`<dd data-fact="url"><code>${t.app.url}</code></dd>`);
    expect(html).toContain(`href="/authorize?app=${t.app.slug}"`);
    expect(html).toContain('id="visibility" data-visibility="private"');
    expect(html).toMatch(/<li>Collection &quot;notes&quot;: read by member; created by owner, member/);
    expect(html).toContain(`href="${appPage(t)}/collections/notes"`);
    expect(html).toContain(`href="${appPage(t)}/collections/log"`);
    expect(html).toContain(`href="${appPage(t)}/feed"`);
    expect(html).toContain(`href="${appPage(t)}/members"`);
    // The list leads here.
    expect(await page("/console/apps", t.who.human.session)).toContain(`href="${appPage(t)}"`);
  });

  it("changes visibility and rotates the share link, showing each link once and never in a redirect", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    const toLink = await post(`${appPage(t)}/visibility`, session, [["visibility", "link"]]);
    expect(toLink.status).toBe(200);
    expect(toLink.headers.get("location")).toBeNull();
    const first = secretOf(await toLink.text());
    expect(first).toMatch(new RegExp(`^${t.app.url.replace(/\./g, "\\.")}#k=[0-9a-f]{32}$`));
    expect(await detail(t)).toMatchObject({ visibility: "link", has_share_token: true });
    const linkPage = await page(appPage(t), session);
    expect(linkPage).toContain('id="rotate-share-link"');
    expect(linkPage).not.toContain(first.split("#k=")[1]);

    const rotated = await post(`${appPage(t)}/share-link/rotate`, session);
    expect(rotated.status).toBe(200);
    const second = secretOf(await rotated.text());
    expect(second).not.toBe(first);
    expect(second.startsWith(t.app.url)).toBe(true);

    const toPublic = await post(`${appPage(t)}/visibility`, session, [["visibility", "public"]]);
    expect(toPublic.status).toBe(303);
    expect(toPublic.headers.get("location")).toBe(`${appPage(t)}?flash=visibility`);
    expect(await detail(t)).toMatchObject({ visibility: "public", has_share_token: false });
    expect(await page(toPublic.headers.get("location")!, session)).toContain("Saved. Public: anyone can open it.");
    // A public app has no share link to rotate: the API's conflict, as a page.
    const refused = await post(`${appPage(t)}/share-link/rotate`, session);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('data-error-code="conflict"');
  });
});

describe("console: a collection's rows", () => {
  it("pages newest first to the end with the author, searches the data, and takes the API's q", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    const keys = await writeNotes(t, 30);
    const base = `${appPage(t)}/collections/notes`;

    const first = await page(base, session);
    expect(rowKeys(first)).toEqual(keys.slice(5).reverse());
    expect(first).toMatch(/data-field="author" data-author-kind="agent"[^>]*>agent /);
    const next = nextHref(first);
    expect(next).toBe(`${base}?after=${encodeURIComponent(keys[5])}`);
    const last = await page(next!, session);
    expect(rowKeys(last)).toEqual(keys.slice(0, 5).reverse());
    expect(last).toContain('id="last-page"');
    expect(nextHref(last)).toBeNull();

    // A row the owner wrote through their session is theirs.
    await json(await call(`${t.path}/collections/notes`, { session, json: { data: { text: "Owner's Needle" } } }), 201);
    const found = await page(`${base}?text=needle`, session);
    expect(rowKeys(found)).toHaveLength(1);
    expect(found).toMatch(new RegExp(`data-author-kind="human"[^>]*>${t.who.human.email.replace(/[.]/g, "\\.")}</td>`));
    const searched = await page(`${base}?text=${encodeURIComponent("note 1")}`, session);
    expect(rowKeys(searched)).toEqual([keys[19], keys[18], keys[17], keys[16], keys[15], keys[14], keys[13], keys[12], keys[11], keys[10], keys[1]]);

    const q = JSON.stringify({ where: [{ field: "text", op: "eq", value: "note 7" }] });
    expect(rowKeys(await page(`${base}?q=${encodeURIComponent(q)}`, session))).toEqual([keys[7]]);
    const sorted = JSON.stringify({ sort: [{ field: "text", dir: "desc" }] });
    const inOrder = rowKeys(await page(`${base}?q=${encodeURIComponent(sorted)}`, session));
    expect(inOrder[0]).toBe(keys[9]);
    expect(await page(`${base}?text=nothing-like-this`, session)).toContain('id="no-rows"');
  });
});

describe("console: the live feed", () => {
  it("shows recent changes newest first and pages back to the oldest", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    const keys = await writeNotes(t, 30);
    await call(`${t.path}/collections/notes/${keys[0]}`, { method: "DELETE", key: t.key });
    const feed = await page(`${appPage(t)}/feed`, session);
    const seqs = [...feed.matchAll(/<tr data-seq="(\d+)" data-op="(\w+)">/g)].map((m) => [Number(m[1]), m[2]]);
    expect(seqs).toHaveLength(25);
    expect(seqs[0]).toEqual([31, "delete"]);
    expect(seqs[1]).toEqual([30, "create"]);
    expect(seqs.map(([s]) => s)).toEqual(Array.from({ length: 25 }, (_, i) => 31 - i));
    const older = await page(nextHref(feed)!, session);
    expect([...older.matchAll(/<tr data-seq="(\d+)"/g)].map((m) => Number(m[1]))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(older).toContain('id="last-page"');
  });
});

describe("console: the trash", () => {
  it("trashes after a confirmation page, restores, and purges only with the slug typed", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    expect(await page(`${appPage(t)}/trash`, session)).toContain('id="confirm-trash"');
    const trashed = await post(`${appPage(t)}/trash`, session);
    expect(trashed.status).toBe(303);
    expect(await detail(t, "?include_deleted=true")).toMatchObject({ status: "deleted" });
    const trashView = await page(trashed.headers.get("location")!, session);
    expect(trashView).toContain('id="restore-app"');
    expect(await page("/console/apps", session)).toContain(`<tr data-app-id="${t.app.app_id}" data-status="deleted">`);

    const restored = await post(`${appPage(t)}/restore`, session);
    expect(restored.headers.get("location")).toBe(`${appPage(t)}?flash=restored`);
    expect(await detail(t)).toMatchObject({ status: "active" });
    // Purging a live app is the API's conflict.
    expect((await call(`${appPage(t)}/purge`, { session })).status).toBe(409);

    await post(`${appPage(t)}/trash`, session);
    expect(await page(`${appPage(t)}/purge`, session)).toContain('id="confirm-slug"');
    const wrong = await post(`${appPage(t)}/purge`, session, [["slug", "not-it"]]);
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('id="form-error"');
    expect(await detail(t, "?include_deleted=true")).toMatchObject({ status: "deleted" });
    const purged = await post(`${appPage(t)}/purge`, session, [["slug", t.app.slug]]);
    expect(purged.status).toBe(303);
    expect(purged.headers.get("location")).toBe("/console/apps?flash=purged");
    expect((await call(`${t.path}?include_deleted=true`, { key: t.key })).status).toBe(404);
    expect((await call(appPage(t), { session })).status).toBe(404);
  });
});

describe("console: the account", () => {
  it("shows the profile and usage, toggles product-update email, and links to deletion", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    const html = await page("/console/account", session);
    expect(html).toContain(`<dd data-fact="email">${t.who.human.email}</dd>`);
    expect(html).toContain('id="marketing" data-consent="off"');
    expect(html).toContain(`<tr data-app-id="${t.app.app_id}">`);
    expect(html).toContain('href="/account/delete"');

    const on = await post("/console/account/marketing", session, [["marketing_consent", "on"]]);
    expect(on.headers.get("location")).toBe("/console/account?flash=marketing-on");
    expect((await json<Obj>(await call("/v1/self/profile", { session }), 200)).marketing_consent).toBe(true);
    expect(await page("/console/account", session)).toContain('id="marketing" data-consent="on"');
    await post("/console/account/marketing", session, [["marketing_consent", "off"]]);
    expect((await json<Obj>(await call("/v1/self/profile", { session }), 200)).marketing_consent).toBe(false);
  });

  it("/account/delete opened bare while signed in mails the confirmation link on request", async () => {
    const t = await consoleTeam();
    const session = t.who.human.session;
    expect(await page("/account/delete", session)).toContain('id="request-deletion"');
    const asked = await post("/account/delete/request", session);
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('id="deletion-mailed"');
    const mail = await json<{ messages: Array<{ text: string }> }>(await call(`/__dev/mail?to=${encodeURIComponent(t.who.human.email)}`), 200);
    expect(mail.messages[0].text).toMatch(/\/account\/delete\?token=del_[0-9a-f]{32}/);
    // Nothing is deleted yet.
    expect((await call("/v1/self/profile", { session })).status).toBe(200);
  });
});
