// Config contract and install of a listed community template (WIRE §2.10): the contract's
// exact shape by <handle>/<slug> (two path segments) and by snapshot id; only approved,
// still-listed snapshots answer; an install makes a new private app of the caller's human
// with the example rows, the answers in the settings row and the caller's upload moved to
// the app; every bad answer is refused before anything exists; both calls count as tries.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildRequest, call, count, dispatch, expectError, json } from "../helpers";
import { installer, listTemplate, publisher, todoManifest, unpublish, type Publisher } from "./fixtures";

const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

async function upload(key: string): Promise<string> {
  const ref = await json<{ attachment_id: string }>(await call("/v1/attachments", { key, json: { content_base64: PNG_B64, filename: "logo.png" } }), 201);
  return ref.attachment_id;
}

function contractPath(pub: Publisher, slug = "todo"): string {
  return `/v1/community/templates/${encodeURIComponent(pub.handle)}/${encodeURIComponent(slug)}/config-contract`;
}

describe("config contract", () => {
  it("by <handle>/<slug> and by snapshot id: exact shape, steps in order, the newest approved version", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    const newest = await listTemplate(pub, { version: "1.1.0" });
    const me = await installer();
    const expected = {
      snapshot_id: newest, name: "Todo", slug: "todo", settings_collection: "settings",
      config_steps: [
        { key: "greeting", kind: "config", label: "Greeting", required: true, secret: false, value_hint: "shown at the top" },
        { key: "color", kind: "config", label: "Colour", required: false, secret: false, choices: ["red", "blue"], default: "blue" },
        { key: "api_token", kind: "config", label: "API token", required: false, secret: true },
        { key: "logo", kind: "upload", label: "Logo", required: false, secret: false },
      ],
      connect_steps: [{ label: "Point your form here", ingest_rule: "signups", collection: null, mode: null }],
    };
    expect(await json(await call(contractPath(pub), { key: me.agent.api_key }), 200)).toEqual(expected);
    expect(await json(await call(`/v1/community/templates/${newest}/config-contract`, { key: me.agent.api_key }), 200)).toEqual(expected);
  });

  it("pending, rejected, unpublished, unknown handle or slug → 404 template_not_found; no key → 401", async () => {
    const pub = await publisher();
    const me = await installer();
    const pending = await listTemplate(pub, { slug: "pending-one", reviewStatus: "pending" });
    const rejected = await listTemplate(pub, { slug: "rejected-one", reviewStatus: "rejected" });
    const gone = await listTemplate(pub, { slug: "gone-one" });
    await unpublish(gone);
    for (const path of [
      `/v1/community/templates/${pending}/config-contract`, `/v1/community/templates/${rejected}/config-contract`, `/v1/community/templates/${gone}/config-contract`,
      contractPath(pub, "pending-one"), contractPath(pub, "gone-one"), contractPath(pub, "nope"), "/v1/community/templates/no-such-handle/todo/config-contract",
      "/v1/community/templates/tpl_nothing/config-contract",
    ]) {
      await expectError(await call(path, { key: me.agent.api_key }), 404, "template_not_found");
      await expectError(await call(path.replace("config-contract", "install"), { key: me.agent.api_key, json: {} }), 404, "template_not_found");
    }
    await expectError(await call(contractPath(pub)), 401, "unauthorized");
  });
});

describe("install", () => {
  it("creates a new private app of the caller's human with the example rows, the answers in the settings row and the upload moved to the app", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub);
    const me = await installer();
    const logo = await upload(me.agent.api_key);
    const body = await json<{ app_id: string; slug: string; url: string }>(await call(`/v1/community/templates/${pub.handle}/todo/install`, {
      key: me.agent.api_key, json: { config: { greeting: "Hello", api_token: "sk-123", logo } },
    }), 201);
    expect(Object.keys(body).sort()).toEqual(["app_id", "slug", "url"]);
    const app = await json<{ owner_human_id: string; visibility: string }>(await call(`/v1/apps/${body.app_id}`, { key: me.agent.api_key }), 200);
    expect(app).toMatchObject({ owner_human_id: me.human.humanId, visibility: "private" });
    const rows = await json<{ rows: { key: string; data: unknown }[] }>(await call(`/v1/apps/${body.app_id}/collections/todos`, { key: me.agent.api_key }), 200);
    expect(rows.rows.map((r) => [r.key, r.data]).sort()).toEqual([["t1", { title: "Buy milk" }], ["t2", { title: "Walk the dog", done: true }]]);
    const settings = await json<{ row: { data: unknown } }>(await call(`/v1/apps/${body.app_id}/collections/settings/install-config`, { key: me.agent.api_key }), 200);
    expect(settings.row.data).toEqual({ greeting: "Hello", color: "blue", api_token: "sk-123", logo });
    const moved = await env.DB.prepare("SELECT scope, app_id FROM attachments WHERE id = ?1").bind(logo).first();
    expect(moved).toEqual({ scope: "app", app_id: body.app_id });
    const install = await env.DB.prepare("SELECT snapshot_id, template_version, installer_human_id, publisher_human_id, template_slug FROM template_installs WHERE app_id = ?1").bind(body.app_id).first();
    expect(install).toEqual({ snapshot_id: snapshotId, template_version: "1.0.0", installer_human_id: me.human.humanId, publisher_human_id: pub.human.humanId, template_slug: "todo" });
    // A second install is a second app.
    const again = await json<{ app_id: string }>(await call(`/v1/community/templates/${snapshotId}/install`, { key: me.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
    expect(again.app_id).not.toBe(body.app_id);
  });

  it("refuses bad answers before anything is created: missing required, outside choices, unknown key, not a string, someone else's upload, an unclaimed agent", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub);
    const me = await installer();
    const other = await installer();
    const theirs = await upload(other.agent.api_key);
    const path = `/v1/community/templates/${snapshotId}/install`;
    const appsBefore = await count("apps", "owner_human_id = ?1", me.human.humanId);
    const cases: [unknown, number, "invalid_request" | "attachment_not_found", string][] = [
      [{}, 400, "invalid_request", "config.greeting"],
      [{ config: { color: "red" } }, 400, "invalid_request", "config.greeting"],
      [{ config: { greeting: "Hi", color: "green" } }, 400, "invalid_request", "config.color"],
      [{ config: { greeting: "Hi", nope: "x" } }, 400, "invalid_request", "config.nope"],
      [{ config: { greeting: "Hi".repeat(1001) } }, 400, "invalid_request", "config.greeting"],
      [{ config: { greeting: 5 } }, 400, "invalid_request", "body.config.greeting"],
      [{ config: { greeting: "Hi" }, extra: true }, 400, "invalid_request", ""],
      [{ config: { greeting: "Hi", logo: theirs } }, 404, "attachment_not_found", "config.logo"],
      [{ config: { greeting: "Hi", logo: "att_doesnotexist00" } }, 404, "attachment_not_found", "config.logo"],
    ];
    for (const [body, status, code, field] of cases) {
      const err = await expectError(await call(path, { key: me.agent.api_key, json: body }), status, code);
      if (field) expect(JSON.stringify(err.details)).toContain(field.replace(/^body\./, ""));
    }
    expect(await count("apps", "owner_human_id = ?1", me.human.humanId)).toBe(appsBefore);
    expect(await env.DB.prepare("SELECT scope, app_id FROM attachments WHERE id = ?1").bind(theirs).first()).toEqual({ scope: "agent", app_id: null });
    const unclaimed = await json<{ api_key: string }>(await call("/v1/register", { json: {} }), 201);
    await expectError(await call(path, { key: unclaimed.api_key, json: { config: { greeting: "Hi" } } }), 403, "agent_not_claimed");
  });

  it("a config answer the settings schema refuses → input_schema_violation, nothing created", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub, { setupSteps: [{ kind: "config", key: "unexpected", label: "Not in the settings schema" }], manifest: todoManifest() });
    const me = await installer();
    const before = await count("apps", "owner_human_id = ?1", me.human.humanId);
    await expectError(await call(`/v1/community/templates/${snapshotId}/install`, { key: me.agent.api_key, json: { config: { unexpected: "x" } } }), 422, "input_schema_violation");
    expect(await count("apps", "owner_human_id = ?1", me.human.humanId)).toBe(before);
  });

  it("contract fetches and installs count as tries on the publisher's analytics; installs as installs", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub);
    const me = await installer();
    // The platform's country of the caller (request.cf) is counted per region.
    const fromNl = new Request(buildRequest(contractPath(pub), { key: me.agent.api_key }), { cf: { country: "NL" } } as RequestInit);
    await json(await dispatch(fromNl), 200);
    await json(await call(`/v1/community/templates/${snapshotId}/install`, { key: me.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
    const stats = await json<Record<string, unknown>>(await call("/v1/publisher/analytics?days=7", { key: pub.agent.api_key }), 200);
    expect(stats).toMatchObject({ days: 7, tries: 2, installs: 1, views: 0, conversion: 0.5 });
    expect(stats.regions).toEqual([{ region: "", tries: 1, installs: 1 }, { region: "NL", tries: 1, installs: 0 }]);
    expect(stats.templates).toEqual([{ snapshot_id: snapshotId, name: "Todo", slug: "todo", version: "1.0.0", tries: 2, installs: 1, views: 0, conversion: 0.5 }]);
    const series = stats.series as { day: string; tries: number }[];
    expect(series).toHaveLength(7);
    expect(series[6]).toEqual({ day: new Date().toISOString().slice(0, 10), tries: 2, installs: 1, views: 0 });
    const session = await json(await call("/v1/publisher/analytics", { session: pub.human.session }), 200);
    expect(session).toMatchObject({ days: 30, tries: 2, installs: 1 });
    await expectError(await call("/v1/publisher/analytics?days=0", { key: pub.agent.api_key }), 400, "invalid_request");
    // Someone else's analytics never include this publisher's templates.
    expect(await json(await call("/v1/publisher/analytics", { key: me.agent.api_key }), 200)).toMatchObject({ tries: 0, installs: 0, templates: [] });
  });
});
