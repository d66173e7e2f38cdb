// The console's community pages, driven like a browser without JavaScript: the gallery
// (approved, listed templates only, newest version per <handle>/<slug>, rating and
// installs, search), a template's page (card, permissions, destinations, steps, reviews,
// the install form from its config contract), installing from the console as the signed-in
// person (a new private app of theirs with the example rows and the answers), and every
// bad install refused on the page with nothing created.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, count, json } from "./helpers";
import { htmlPage as page, postForm as post, urlencoded as form } from "./console-pages";
import { installer, listTemplate, publisher, unpublish } from "./community-install/fixtures";

async function installsBy(humanId: string): Promise<number> {
  return count("template_installs", "installer_human_id = ?1", humanId);
}

describe("console: the template gallery", () => {
  it("lists approved, listed templates (newest version each) with publisher, description, rating and installs; hides pending, rejected and unpublished ones", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    await listTemplate(pub, { version: "1.2.0" });
    await listTemplate(pub, { slug: "waiting", reviewStatus: "pending" });
    await listTemplate(pub, { slug: "refused", reviewStatus: "rejected" });
    await unpublish(await listTemplate(pub, { slug: "taken-down" }));
    const html = await page(`/console/gallery?q=${pub.handle}`, undefined);
    const entries = [...html.matchAll(/data-template="([^"]+)"/g)].map((m) => m[1]);
    expect(entries).toEqual([`${pub.handle}/todo`]);
    for (const fragment of [
      `<span data-field="publisher">@${pub.handle}</span>`,
      "version 1.2.0",
      '<p data-field="description">A todo list</p>',
      '<span data-field="rating">No reviews yet</span>',
      '<span data-field="installs">0 installs</span>',
    ]) expect(html).toContain(fragment);
    expect(await page("/console/gallery?q=no-such-template-anywhere-zz", undefined)).toContain('id="no-templates"');
  });

  it("a template's page: card, what the manifest asks for, destinations, setup steps, reviews and the install form; signed out it asks to sign in", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const path = `/console/gallery/${pub.handle}/todo`;
    const anonymous = await page(path, undefined);
    expect(anonymous).toContain('id="install-sign-in"');
    expect(anonymous).not.toContain('id="install-form"');
    for (const fragment of [
      `<img src="${path}/card.png"`,
      '<tr data-collection="todos">',
      'id="no-destinations"',
      '<li data-step-kind="connect">',
      'id="no-reviews"',
    ]) expect(anonymous).toContain(fragment);
    const card = await call(`${path}/card.png`);
    expect(card.status).toBe(200);
    expect(card.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await card.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);

    const me = await installer();
    const signedIn = await page(path, me.human.session);
    expect(signedIn).toContain('<form method="post" action="' + path + '/install" id="install-form">');
    expect(signedIn).toContain('name="config.greeting"');
    expect(signedIn).toMatch(/<input type="password" id="config-api_token" name="config.api_token"/);
    for (const fragment of [
      '<option value="blue" selected="">blue</option>',
      `<input type="hidden" name="agent_id" value="${me.agent.agent_id}"/>`,
      'id="nav-gallery"',
    ]) expect(signedIn).toContain(fragment);
  });

  it("install from the console: a new private app of the person's with the example rows and the answers; the page redirects to it", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub);
    const me = await installer();
    const res = await post(`/console/gallery/${pub.handle}/todo/install`, me.human.session, [
      ["config.greeting", "Hi there"], ["config.color", "red"], ["config.api_token", ""], ["agent_id", me.agent.agent_id],
    ]);
    expect(res.status, await res.clone().text()).toBe(303);
    const appId = /^\/console\/apps\/([^/?]+)$/.exec(res.headers.get("location") ?? "")?.[1];
    expect(appId).toBeTruthy();
    const app = await json<{ owner_human_id: string; visibility: string }>(await call(`/v1/apps/${appId}`, { key: me.agent.api_key }), 200);
    expect(app).toMatchObject({ owner_human_id: me.human.humanId, visibility: "private" });
    const rows = await json<{ rows: { key: string }[] }>(await call(`/v1/apps/${appId}/collections/todos`, { key: me.agent.api_key }), 200);
    expect(rows.rows.map((r) => r.key).sort()).toEqual(["t1", "t2"]);
    const settings = await json<{ row: { data: unknown } }>(await call(`/v1/apps/${appId}/collections/settings/install-config`, { key: me.agent.api_key }), 200);
    expect(settings.row.data).toEqual({ greeting: "Hi there", color: "red" });
    const install = await env.DB.prepare("SELECT snapshot_id, installer_agent_id FROM template_installs WHERE app_id = ?1").bind(appId).first();
    expect(install).toEqual({ snapshot_id: snapshotId, installer_agent_id: me.agent.agent_id });
    expect(await page(`/console/gallery?q=${pub.handle}`, undefined)).toContain('<span data-field="installs">1 install</span>');
  });

  it("bad installs are refused on the page and create nothing: a missing required answer, a value outside the choices, an unknown step, someone else's agent, no agent; signed out goes to sign-in", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const me = await installer();
    const other = await installer();
    const path = `/console/gallery/${pub.handle}/todo/install`;
    const cases: Array<[Array<[string, string]>, number, string]> = [
      [[["config.color", "red"], ["agent_id", me.agent.agent_id]], 400, "is required"],
      [[["config.greeting", "Hi"], ["config.color", "green"], ["agent_id", me.agent.agent_id]], 400, "is not one of the choices"],
      [[["config.greeting", "Hi"], ["config.nope", "x"], ["agent_id", me.agent.agent_id]], 400, "is not a config step"],
      [[["config.greeting", "Hi"], ["agent_id", other.agent.agent_id]], 400, "Choose one of your active agents"],
      [[["config.greeting", "Hi"]], 400, "Choose one of your active agents"],
      [[["config.greeting", "Hi"], ["config.logo", "att_not_mine"], ["agent_id", me.agent.agent_id]], 404, "not an upload of yours"],
    ];
    for (const [fields, status, text] of cases) {
      const res = await post(path, me.human.session, fields);
      const html = await res.text();
      expect(res.status, html).toBe(status);
      for (const fragment of [
        'id="form-error"',
        text,
        'id="install-form"',
      ]) expect(html).toContain(fragment);
    }
    expect(await installsBy(me.human.humanId)).toBe(0);
    const signedOut = await call(path, { method: "POST", origin: "http://localhost:8787", ...form([["config.greeting", "Hi"]]) });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toContain("/signin?return_to=");
  });

  it("unknown, pending or unpublished templates answer the console's not-found page, never a 500", async () => {
    const pub = await publisher();
    await listTemplate(pub, { slug: "not-yet", reviewStatus: "pending" });
    const gone = await listTemplate(pub, { slug: "gone" });
    await unpublish(gone);
    const me = await installer();
    for (const path of [`/console/gallery/${pub.handle}/not-yet`, `/console/gallery/${pub.handle}/gone`, "/console/gallery/nobody-here/todo", `/console/gallery/${pub.handle}/${"x".repeat(300)}`]) {
      const html = await page(path, me.human.session, 404);
      expect(html).toContain('data-error-code="template_not_found"');
      expect((await call(`${path}/card.png`)).status).toBe(404);
      expect((await post(`${path}/install`, me.human.session, [["agent_id", me.agent.agent_id]])).status).toBe(404);
    }
    expect(await installsBy(me.human.humanId)).toBe(0);
  });
});

/** Console calls with the relay treating `email` as a community operator. */
function asOperatorConfig(email: string) {
  return { COMMUNITY_REVIEW_OPERATOR_EMAILS: `ops-elsewhere@example.com, ${email.toUpperCase()}` };
}

async function operatorPage(email: string, path: string, session: string, status = 200): Promise<string> {
  const res = await callWith(asOperatorConfig(email), path, { session });
  const html = await res.text();
  expect(res.status, html.slice(0, 2000)).toBe(status);
  return html;
}

function operatorPost(email: string, path: string, session: string, fields: Array<[string, string]> = []): Promise<Response> {
  return callWith(asOperatorConfig(email), path, { method: "POST", session, ...form(fields) });
}

/** The queue's snapshot ids in order, following its pages to the end. */
async function queueIds(email: string, session: string): Promise<Array<{ id: string; expedited: boolean }>> {
  const out: Array<{ id: string; expedited: boolean }> = [];
  let path: string | null = "/console/review";
  while (path) {
    const html = await operatorPage(email, path, session);
    out.push(...[...html.matchAll(/<tr data-snapshot-id="([^"]+)" data-expedited="(true|false)">/g)].map((m) => ({ id: m[1], expedited: m[2] === "true" })));
    const next = /href="([^"]+)" id="next-page"/.exec(html);
    path = next ? next[1].replace(/&amp;/g, "&") : null;
  }
  return out;
}

describe("console: the operator's review queue", () => {
  it("only operators: others get the not_a_reviewer page on every review path and change nothing; signed out goes to sign-in", async () => {
    const pub = await publisher();
    const pending = await listTemplate(pub, { slug: "queued", reviewStatus: "pending" });
    const someone = await installer();
    for (const path of ["/console/review", `/console/review/${pending}`]) {
      const html = await operatorPage("ops-only@example.com", path, someone.human.session, 403);
      expect(html).toContain('data-error-code="not_a_reviewer"');
      expect(html).not.toContain('id="nav-review"');
    }
    for (const verb of ["approve", "reject"]) {
      const res = await operatorPost("ops-only@example.com", `/console/review/${pending}/${verb}`, someone.human.session, [["note", "no"]]);
      expect(res.status).toBe(403);
    }
    expect((await env.DB.prepare("SELECT review_status FROM template_snapshots WHERE id = ?1").bind(pending).first())?.review_status).toBe("pending");
    const signedOut = await call("/console/review");
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toBe("/signin?return_to=%2Fconsole%2Freview");
  });

  it("lists pending submissions expedited first; a submission's page shows facts, escaped HTML, manifest, example rows, destinations and steps", async () => {
    const pub = await publisher();
    const plain = await listTemplate(pub, { slug: "plain-one", reviewStatus: "pending", html: "<!doctype html><title>T</title><script>alert(1)</script>" });
    const fast = await listTemplate(pub, { slug: "fast-one", reviewStatus: "pending" });
    await env.DB.prepare("UPDATE template_snapshots SET expedited = 1 WHERE id = ?1").bind(fast).run();
    const ops = await installer();
    const ids = await queueIds(ops.human.email, ops.human.session);
    const mine = ids.filter((entry) => entry.id === plain || entry.id === fast);
    expect(mine).toEqual([{ id: fast, expedited: true }, { id: plain, expedited: false }]);
    expect(ids.findIndex((entry) => !entry.expedited)).toBeGreaterThan(ids.findLastIndex((entry) => entry.expedited));

    const html = await operatorPage(ops.human.email, `/console/review/${plain}`, ops.human.session);
    expect(html).toContain('id="nav-review"');
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>alert(1)</script>");
    for (const fragment of [
      '<dd data-fact="status">pending</dd>',
      '<tr data-seed-key="t1">',
      'id="submission-manifest"',
      'id="no-destinations"',
      '<li data-step-kind="config">',
      'id="approve"',
      'id="reject-form"',
    ]) expect(html).toContain(fragment);
  });

  it("Approve lists it in the gallery; Reject needs a note (refused on the page otherwise) and records it; unknown ids are submission_not_found", async () => {
    const pub = await publisher();
    const first = await listTemplate(pub, { slug: "to-approve", reviewStatus: "pending" });
    const second = await listTemplate(pub, { slug: "to-reject", reviewStatus: "pending" });
    const ops = await installer();
    const approved = await operatorPost(ops.human.email, `/console/review/${first}/approve`, ops.human.session);
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe(`/console/review/${first}?flash=approved`);
    const after = await operatorPage(ops.human.email, approved.headers.get("location")!, ops.human.session);
    expect(after).toContain('id="flash"');
    expect(after).toContain('<dd data-fact="status">approved</dd>');
    expect(await page(`/console/gallery?q=${pub.handle}`, undefined)).toContain(`data-template="${pub.handle}/to-approve"`);
    const row = await env.DB.prepare("SELECT review_status, reviewed_by_human_id FROM template_snapshots WHERE id = ?1").bind(first).first();
    expect(row).toEqual({ review_status: "approved", reviewed_by_human_id: ops.human.humanId });

    for (const note of ["", "   ", "x".repeat(2001)]) {
      const refused = await operatorPost(ops.human.email, `/console/review/${second}/reject`, ops.human.session, [["note", note]]);
      const html = await refused.text();
      expect(refused.status, html.slice(0, 500)).toBe(400);
      expect(html).toContain('id="form-error"');
    }
    expect((await env.DB.prepare("SELECT review_status FROM template_snapshots WHERE id = ?1").bind(second).first())?.review_status).toBe("pending");
    const rejected = await operatorPost(ops.human.email, `/console/review/${second}/reject`, ops.human.session, [["note", "The seed rows hold a real address."]]);
    expect(rejected.status).toBe(303);
    const gone = await env.DB.prepare("SELECT review_status, review_note FROM template_snapshots WHERE id = ?1").bind(second).first();
    expect(gone).toEqual({ review_status: "rejected", review_note: "The seed rows hold a real address." });
    expect(await operatorPage(ops.human.email, `/console/review/${second}`, ops.human.session)).toContain('<dd data-fact="review-note">The seed rows hold a real address.</dd>');

    for (const path of ["/console/review/tpl_nothing_here", `/console/review/${"y".repeat(300)}`]) {
      expect(await operatorPage(ops.human.email, path, ops.human.session, 404)).toContain('data-error-code="submission_not_found"');
      expect((await operatorPost(ops.human.email, `${path}/approve`, ops.human.session)).status).toBe(404);
    }
    expect((await callWith(asOperatorConfig(ops.human.email), "/console/review?cursor=garbage", { session: ops.human.session })).status).toBe(400);
  });
});

describe("console: held reviews in the review queue", () => {
  it("lists reviews held for a link or address; Release makes one visible, Remove takes one down; others are refused", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const held: string[] = [];
    for (const body of ["See https://spam.example for more", "Mail me at someone@example.com"]) {
      const fan = await installer();
      await json(await call(`/v1/community/templates/${pub.handle}/todo/install`, { key: fan.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
      const review = await json<{ id: string; status: string }>(await call("/v1/reviews", { key: fan.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 2, body } }), 201);
      expect(review.status).toBe("held");
      held.push(review.id);
    }
    const ops = await installer();
    const queuePage = await operatorPage(ops.human.email, "/console/review", ops.human.session);
    for (const id of held) expect(queuePage).toContain(`<li data-review-id="${id}" class="spaced">`);
    expect((await operatorPost("ops-only@example.com", `/console/review/reviews/${held[0]}/unhold`, ops.human.session)).status).toBe(403);
    const released = await operatorPost(ops.human.email, `/console/review/reviews/${held[0]}/unhold`, ops.human.session);
    expect(released.headers.get("location")).toBe("/console/review?flash=released");
    const removed = await operatorPost(ops.human.email, `/console/review/reviews/${held[1]}/remove`, ops.human.session);
    expect(removed.headers.get("location")).toBe("/console/review?flash=removed");
    const statuses = await env.DB.prepare("SELECT id, status FROM template_reviews WHERE id IN (?1, ?2) ORDER BY id").bind(...held).all();
    expect(Object.fromEntries(statuses.results.map((row) => [row.id, row.status]))).toEqual({ [held[0]]: "visible", [held[1]]: "removed" });
    expect((await operatorPost(ops.human.email, "/console/review/reviews/rev_nothing/remove", ops.human.session)).status).toBe(404);
    expect((await operatorPost(ops.human.email, `/console/review/reviews/${held[1]}/unhold`, ops.human.session)).status).toBe(409);
  });
});

async function publisherRow(humanId: string) {
  return env.DB.prepare("SELECT handle, display_name, bio, url FROM publishers WHERE human_id = ?1").bind(humanId).first();
}

describe("console: the publisher page", () => {
  it("claims a permanent handle once: bad, taken and second claims are refused on the page", async () => {
    const me = await installer();
    expect((await call("/console/publisher")).headers.get("location")).toBe("/signin?return_to=%2Fconsole%2Fpublisher");
    const fresh = await page("/console/publisher", me.human.session);
    for (const fragment of ['id="claim-form"', "not claimed yet", 'id="no-published-templates"', 'id="no-publisher-reviews"', 'id="nav-publisher"']) expect(fresh).toContain(fragment);
    for (const bad of ["", "A", "ab", "-abc", "abc-", "has space", "x".repeat(40)]) {
      const res = await post("/console/publisher/claim", me.human.session, [["handle", bad]]);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('id="form-error"');
    }
    const handle = `me-${crypto.randomUUID().slice(0, 8)}`;
    const claimed = await post("/console/publisher/claim", me.human.session, [["handle", handle]]);
    expect(claimed.status).toBe(303);
    expect(claimed.headers.get("location")).toBe("/console/publisher?flash=claimed");
    const after = await page("/console/publisher?flash=claimed", me.human.session);
    expect(after).toContain(`<dd data-fact="handle">@${handle}</dd>`);
    expect(after).not.toContain('id="claim-form"');
    expect((await post("/console/publisher/claim", me.human.session, [["handle", `${handle}-2`]])).status).toBe(409);
    const other = await installer();
    const taken = await post("/console/publisher/claim", other.human.session, [["handle", handle]]);
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("is taken");
    expect((await publisherRow(me.human.humanId))?.handle).toBe(handle);
  });

  it("edits display name, bio and web address (blank clears); bad values change nothing", async () => {
    const me = await installer();
    const saved = await post("/console/publisher/profile", me.human.session, [["display_name", " Ada "], ["bio", "Builds todo apps"], ["url", "https://ada.example"]]);
    expect(saved.status).toBe(303);
    expect(await publisherRow(me.human.humanId)).toMatchObject({ display_name: "Ada", bio: "Builds todo apps", url: "https://ada.example" });
    const good = { display_name: "Ada", bio: "Builds todo apps", url: "https://ada.example" };
    for (const bad of [{ display_name: "x".repeat(81) }, { bio: "b".repeat(501) }, { url: "javascript:alert(1)" }, { url: "ftp://x.example" }]) {
      expect((await post("/console/publisher/profile", me.human.session, Object.entries({ ...good, ...bad }))).status).toBe(400);
    }
    expect(await publisherRow(me.human.humanId)).toMatchObject({ display_name: "Ada", bio: "Builds todo apps", url: "https://ada.example" });
    expect((await post("/console/publisher/profile", me.human.session, [["display_name", ""], ["bio", " "], ["url", ""]])).status).toBe(303);
    expect(await publisherRow(me.human.humanId)).toMatchObject({ display_name: null, bio: null, url: null });
  });

  it("lists the person's templates with review status and note, and their reviews with an answer form; only their own reviews can be answered", async () => {
    const pub = await publisher();
    const listed = await listTemplate(pub);
    await listTemplate(pub, { slug: "waiting", reviewStatus: "pending" });
    const refused = await listTemplate(pub, { slug: "refused", reviewStatus: "rejected" });
    await env.DB.prepare("UPDATE template_snapshots SET review_note = 'Seed rows look real' WHERE id = ?1").bind(refused).run();
    const fan = await installer();
    await json(await call(`/v1/community/templates/${pub.handle}/todo/install`, { key: fan.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
    const review = await json<{ id: string }>(await call("/v1/reviews", { key: fan.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 4, body: "Does the job" } }), 201);

    const html = await page("/console/publisher", pub.human.session);
    for (const fragment of [
      `<tr data-snapshot-id="${listed}" data-review-status="approved">`, `href="/console/gallery/${pub.handle}/todo"`,
      'data-review-status="pending"', "Operator&#39;s note: Seed rows look real", `<li data-review-id="${review.id}" class="spaced">`, "Does the job", "4 ★ (1 review)",
    ]) expect(html).toContain(fragment);

    const answered = await post(`/console/publisher/reviews/${review.id}/respond`, pub.human.session, [["response", "Thank you!"]]);
    expect(answered.status).toBe(303);
    expect((await env.DB.prepare("SELECT publisher_response FROM template_reviews WHERE id = ?1").bind(review.id).first())?.publisher_response).toBe("Thank you!");
    expect(await page(`/console/gallery/${pub.handle}/todo`, undefined)).toContain("Publisher&#39;s response: Thank you!");
    expect((await post(`/console/publisher/reviews/${review.id}/respond`, fan.human.session, [["response", "I am not the publisher"]])).status).toBe(403);
    expect((await post("/console/publisher/reviews/rev_nothing/respond", pub.human.session, [["response", "x"]])).status).toBe(404);
    expect((await post(`/console/publisher/reviews/${review.id}/respond`, pub.human.session, [["response", "r".repeat(2001)]])).status).toBe(400);
    expect((await post(`/console/publisher/reviews/${review.id}/respond`, pub.human.session, [["response", ""]])).status).toBe(303);
    expect((await env.DB.prepare("SELECT publisher_response FROM template_reviews WHERE id = ?1").bind(review.id).first())?.publisher_response).toBeNull();
  });
});
