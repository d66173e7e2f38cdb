// Who reaches an app (spec A: app_not_found "belongs to another owner"; app-access.ts):
// every agent of the owning human manages it like the one that deployed it; an agent or
// session of another human, or an unclaimed agent, gets 404 app_not_found on every
// route — never 403 — and changes nothing. Also: every apps route is in the OpenAPI
// document.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, claimedAgent, expectError, json, register, signIn } from "../helpers";
import { registeredRoutes } from "../../../src/http/routes";
import { MANIFEST, deploy, owner, redeploy, unchanged } from "./fixtures";

describe("another agent of the same human", () => {
  it("lists, shows, redeploys, patches, rotates, deletes, restores, purges", async () => {
    const o = await owner();
    const sibling = await claimedAgent(o.human, "sibling");
    const created = await deploy(o.key, { visibility: "link" });
    const key = sibling.api_key;
    expect((await json<{ items: Array<{ id: string }> }>(await call("/v1/apps", { key }), 200)).items.map((i) => i.id)).toEqual([created.app_id]);
    expect((await json<{ id: string }>(await call(`/v1/apps/${created.slug}`, { key }), 200)).id).toBe(created.app_id);
    const r = await redeploy(key, created.app_id, { html: "<p>by sibling</p>" });
    expect(r.version).toBe(2);
    const v2 = await env.DB.prepare("SELECT created_by_agent_id AS a FROM app_versions WHERE app_id = ?1 AND version = 2").bind(created.app_id).first<{ a: string }>();
    expect(v2!.a).toBe(sibling.agent_id);
    expect((await json<{ html: string }>(await call(`/v1/apps/${created.app_id}/document`, { key }), 200)).html).toBe("<p>by sibling</p>");
    await json(await call(`/v1/apps/${created.app_id}`, { key, method: "PATCH", json: { timezone: "Europe/Berlin" } }), 200);
    await json(await call(`/v1/apps/${created.app_id}/share-link/rotate`, { key, method: "POST" }), 200);
    await json(await call(`/v1/apps/${created.app_id}/disclosure`, { key }), 200);
    await json(await call(`/v1/apps/${created.app_id}/wake`, { key, method: "POST" }), 200);
    await json(await call(`/v1/apps/${created.app_id}`, { key, method: "DELETE" }), 200);
    await json(await call(`/v1/apps/${created.app_id}/restore`, { key, method: "POST" }), 200);
    await json(await call(`/v1/apps/${created.app_id}`, { key, method: "DELETE" }), 200);
    await json(await call(`/v1/apps/${created.app_id}/purge`, { key, method: "POST" }), 200);
    await expectError(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 404, "app_not_found");
  });
});

describe("an agent or session of another human", () => {
  it("gets 404 app_not_found on every app route, by id and by slug, and changes nothing", async () => {
    const o = await owner();
    const created = await deploy(o.key, { visibility: "link" });
    const strangerHuman = await signIn();
    const strangerAgent = await claimedAgent(strangerHuman);
    const unclaimed = await register();
    const callers = [
      { key: strangerAgent.api_key },
      { key: unclaimed.api_key },
      { session: strangerHuman.session },
    ];
    const routes: Array<[string, string, unknown?]> = [
      ["GET", ""],
      ["GET", "?include_deleted=true"],
      ["PATCH", "", { visibility: "public" }],
      ["DELETE", ""],
      ["GET", "/document"],
      ["GET", "/disclosure"],
      ["POST", "/versions", { html: "<p>stolen</p>" }],
      ["POST", "/versions", { html: "<p>stolen</p>", dry_run: true }],
      ["POST", "/share-link/rotate", {}],
      ["POST", "/restore"],
      ["POST", "/purge"],
      ["POST", "/wake"],
    ];
    await unchanged(o, created.app_id, async () => {
      for (const caller of callers) {
        for (const id of [created.app_id, created.slug]) {
          for (const [method, suffix, body] of routes) {
            // Agent-only routes answer a session with 401 before looking the app up.
            if (suffix === "/versions" && "session" in caller) continue;
            const res = await call(`/v1/apps/${id}${suffix}`, { ...caller, method, ...(body === undefined ? {} : { json: body }) });
            const e = await expectError(res, 404, "app_not_found");
            expect(e.details).toEqual({ app: id });
            expect(e.message).not.toContain(o.human.email);
          }
        }
      }
    });
    // The app is also absent from their lists and audits.
    for (const caller of callers) {
      expect((await json<{ items: unknown[] }>(await call("/v1/apps?status=all", caller), 200)).items).toEqual([]);
      expect((await json<{ apps_scanned: number }>(await call("/v1/apps/advisories", caller), 200)).apps_scanned).toBe(0);
    }
    // A deleted app is as invisible to them as a live one.
    await json(await call(`/v1/apps/${created.app_id}`, { key: o.key, method: "DELETE" }), 200);
    for (const caller of callers) {
      await expectError(await call(`/v1/apps/${created.app_id}/restore`, { ...caller, method: "POST" }), 404, "app_not_found");
      await expectError(await call(`/v1/apps/${created.app_id}/purge`, { ...caller, method: "POST" }), 404, "app_not_found");
    }
    expect((await env.DB.prepare("SELECT status FROM apps WHERE id = ?1").bind(created.app_id).first<{ status: string }>())!.status).toBe("deleted");
  });

  it("the answer for someone else's app is the same as for an app that does not exist", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const stranger = await owner();
    const theirs = await call(`/v1/apps/${created.app_id}`, { key: stranger.key });
    const missing = await call(`/v1/apps/a${"0".repeat(24)}`, { key: stranger.key });
    expect(theirs.status).toBe(missing.status);
    const a = (await theirs.json<{ error: Record<string, unknown> }>()).error;
    const b = (await missing.json<{ error: Record<string, unknown> }>()).error;
    expect({ ...a, message: undefined, details: undefined }).toEqual({ ...b, message: undefined, details: undefined });
  });
});

describe("OpenAPI", () => {
  const APP_ROUTES = [
    "POST /v1/apps", "GET /v1/apps", "GET /v1/apps/advisories", "GET /v1/apps/{id}", "PATCH /v1/apps/{id}", "DELETE /v1/apps/{id}",
    "POST /v1/apps/{id}/versions", "GET /v1/apps/{id}/document", "POST /v1/apps/{id}/share-link/rotate", "POST /v1/apps/{id}/restore",
    "POST /v1/apps/{id}/purge", "POST /v1/apps/{id}/wake", "GET /v1/apps/{id}/disclosure",
  ];

  it("documents every apps route, each registered with defineRoute", async () => {
    const doc = await json<{ paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>> }>(await call("/v1/openapi.json"), 200);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    const registered = registeredRoutes().map((r) => `${r.spec.method.toUpperCase()} ${r.spec.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`);
    for (const route of APP_ROUTES) {
      expect(documented).toContain(route);
      expect(registered).toContain(route);
    }
    // The request schemas refuse unknown fields, as the relay does.
    expect(doc.paths["/v1/apps"].post.requestBody!.content["application/json"].schema.additionalProperties).toBe(false);
    expect(doc.paths["/v1/apps/{id}/versions"].post.requestBody!.content["application/json"].schema.additionalProperties).toBe(false);
  });

  it("a wrong verb on an apps path → 405 with Allow", async () => {
    const res = await call("/v1/apps/abc", { method: "PUT", json: {} });
    const e = await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, PATCH, DELETE, HEAD");
    expect(e.details).toMatchObject({ allow: ["GET", "PATCH", "DELETE", "HEAD"] });
    const versions = await call("/v1/apps/abc/versions", { method: "GET" });
    await expectError(versions, 405, "method_not_allowed");
    expect(versions.headers.get("allow")).toBe("POST");
  });

  it("a create with a manifest of another owner's slug is no way to probe: slug_taken names nothing else", async () => {
    const o = await owner();
    const slug = `probe-${crypto.randomUUID().slice(0, 8)}`;
    const created = await deploy(o.key, { slug });
    const stranger = await owner();
    const res = await call("/v1/apps", { key: stranger.key, json: { html: "<p>x</p>", manifest: MANIFEST, slug } });
    const e = await expectError(res, 409, "slug_taken");
    expect(JSON.stringify(e)).not.toContain(created.app_id);
    expect(JSON.stringify(e)).not.toContain(o.human.humanId);
  });
});
