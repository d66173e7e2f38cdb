// The console's community pages, driven like a browser without JavaScript: the gallery
// (approved, listed templates only, newest version per <handle>/<slug>, rating and
// installs, search), a template's page (card, permissions, destinations, steps, reviews,
// the install form from its config contract), installing from the console as the signed-in
// person (a new private app of theirs with the example rows and the answers), and every
// bad install refused on the page with nothing created.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, count, json } from "./helpers";
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
    expect(html).toContain(`<span data-field="publisher">@${pub.handle}</span>`);
    expect(html).toContain("version 1.2.0");
    expect(html).toContain('<p data-field="description">A todo list</p>');
    expect(html).toContain('<span data-field="rating">No reviews yet</span>');
    expect(html).toContain('<span data-field="installs">0 installs</span>');
    expect(await page("/console/gallery?q=no-such-template-anywhere-zz", undefined)).toContain('id="no-templates"');
  });

  it("a template's page: card, what the manifest asks for, destinations, setup steps, reviews and the install form; signed out it asks to sign in", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const path = `/console/gallery/${pub.handle}/todo`;
    const anonymous = await page(path, undefined);
    expect(anonymous).toContain('id="install-sign-in"');
    expect(anonymous).not.toContain('id="install-form"');
    expect(anonymous).toContain(`<img src="${path}/card.png"`);
    expect(anonymous).toContain('<tr data-collection="todos">');
    expect(anonymous).toContain('id="no-destinations"');
    expect(anonymous).toContain('<li data-step-kind="connect">');
    expect(anonymous).toContain('id="no-reviews"');
    const card = await call(`${path}/card.png`);
    expect(card.status).toBe(200);
    expect(card.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await card.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);

    const me = await installer();
    const signedIn = await page(path, me.human.session);
    expect(signedIn).toContain('<form method="post" action="' + path + '/install" id="install-form">');
    expect(signedIn).toContain('name="config.greeting"');
    expect(signedIn).toMatch(/<input type="password" id="config-api_token" name="config.api_token"/);
    expect(signedIn).toContain('<option value="blue" selected="">blue</option>');
    expect(signedIn).toContain(`<input type="hidden" name="agent_id" value="${me.agent.agent_id}"/>`);
    expect(signedIn).toContain('id="nav-gallery"');
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
      expect(html).toContain('id="form-error"');
      expect(html).toContain(text);
      expect(html).toContain('id="install-form"');
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
