// A create with starter rows (input_data) is not an app until its rows are in (issue 16,
// Faults; src/apps/seeding.ts). Held between its D1 batch and its seed (held-seed.ts), as
// a relay killed there would leave it: the app is in none of its owner's lists (/v1, the
// console's /v1/self, the MCP apps tool), its id and slug answer app_not_found, its pages
// are not served and it takes no slot of the app cap; a retry with its slug is told the
// slug is held by the caller's own unfinished create. Released, it appears first in the
// list with its rows; a hand-over that would overrun the cap is refused and leaves
// nothing. What the create derives from its manifest (inbound hooks, webhook secret) is in
// its answer and works once the app is handed over. A seed whose answer is lost leaves no
// app (held-seed.ts seedAnswerLost); a hand-over whose answer is lost after it landed
// leaves the app whole and answered. One whose create died is purged by the `seeds` sweep
// (hooks and webhook secret with it) once the seeding window has passed, and not before.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, count, expectError, json } from "../helpers";
import { appMadeBesides, consoleListedIds, deploy, listedIds, MANIFEST, owner } from "./fixtures";
import { appCall } from "../serve/helpers";
import { tool } from "../mcp/rpc";
import { ingestManifest, post } from "../ingest/fixtures";
import { handOverAnswerLost, heldSeed, seedAnswerLost } from "./held-seed";
import { SEEDING_LAPSE_MS, undoAbandonedSeeds } from "../../../src/apps/seeding";
import { sweepNames } from "../../../src/sweeps";

const STARTER = { notes: [{ key: "n0", data: { text: "first" } }, { key: "n1", data: { text: "second" } }] };

const uniqueSlug = () => `seeded-${crypto.randomUUID().slice(0, 8)}`;

/** Everything of an app in D1 a purge must remove: its record, versions, inbound hooks and webhook secret. */
async function traces(appId: string) {
  return {
    apps: await count("apps", "id = ?1", appId),
    versions: await count("app_versions", "app_id = ?1", appId),
    hooks: await count("ingest_hooks", "app_id = ?1", appId),
    secrets: await count("webhook_secrets", "app_id = ?1", appId),
  };
}

describe("a create with starter rows, before its rows are in", { timeout: 60_000 }, () => {
  it("is shown nowhere and answers app_not_found until it is seeded, then is listed first with its rows", async () => {
    const who = await owner();
    const other = await deploy(who.key, { visibility: "public" });
    const slug = uniqueSlug();
    const body = { html: "<h1>seeded</h1>", manifest: MANIFEST, visibility: "public", slug, input_data: STARTER };
    const held = heldSeed(who.key, body);
    await held.reached;
    const app = await appMadeBesides(who, [other.app_id]);
    expect(app.slug).toBe(slug);

    expect(await listedIds(who)).toEqual([other.app_id]);
    expect(await listedIds(who, "&status=all")).toEqual([other.app_id]);
    expect(await listedIds(who, `&slug=${slug}`)).toEqual([]);
    expect(await consoleListedIds(who)).toEqual([other.app_id]);
    const mcpList = await tool(who.key, "apps", { action: "list" });
    expect(mcpList.isError).toBe(false);
    expect((mcpList.value.items as Array<{ id: string }>).map((a) => a.id)).toEqual([other.app_id]);

    const key = who.key;
    for (const ref of [app.id, slug]) await expectError(await call(`/v1/apps/${ref}`, { key }), 404, "app_not_found");
    await expectError(await call(`/v1/apps/${app.id}/collections/notes`, { key }), 404, "app_not_found");
    await expectError(await call(`/v1/apps/${app.id}/collections/notes`, { key, json: { data: { text: "sneaked in" } } }), 404, "app_not_found");
    await expectError(await call(`/v1/apps/${app.id}/versions`, { key, json: { html: "<h1>v2</h1>" } }), 404, "app_not_found");
    await expectError(await call(`/v1/apps/${app.id}`, { key, method: "DELETE" }), 404, "app_not_found");
    expect((await appCall(slug, "/")).status).toBe(404);

    // A retry of the same create while it is held: its slug is still held, and the caller is told by whom.
    const retried = await expectError(await call("/v1/apps", { key, json: body }), 409, "slug_taken");
    expect(retried.message).toMatch(/create of yours/);
    // Another person's create with that slug is told only that it is in use.
    const stranger = await owner();
    const refused = await expectError(await call("/v1/apps", { key: stranger.key, json: body }), 409, "slug_taken");
    expect(refused.message).not.toMatch(/create of yours/);

    held.release();
    const done = await json<Record<string, unknown>>(await held.answer, 201);
    expect(Object.keys(done).sort()).toEqual(["app_id", "created", "slug", "url", "version", "visibility"]);
    expect(done).toMatchObject({ app_id: app.id, slug, visibility: "public", version: 1, created: true });
    expect(await listedIds(who)).toEqual([app.id, other.app_id]);
    expect(await consoleListedIds(who)).toContain(app.id);
    expect(await json<{ row_count: number; status: string }>(await call(`/v1/apps/${app.id}`, { key }), 200)).toMatchObject({ row_count: 2, status: "active" });
    const rows = await json<{ rows: Array<{ key: string; data: { text: string } }> }>(await call(`/v1/apps/${app.id}/collections/notes`, { key }), 200);
    expect(rows.rows.map((row) => [row.key, row.data.text]).sort()).toEqual([["n0", "first"], ["n1", "second"]]);
    expect((await appCall(slug, "/")).status).toBe(200);
  });

  it("takes no slot of the app cap: another create fits beside it, and its hand-over is then refused at the cap, leaving nothing", async () => {
    const who = await owner();
    const first = await deploy(who.key);
    // One live app: a cap of two leaves one slot, which the create in flight does not take.
    const capped = { MAX_APPS_PER_ACCOUNT: "2" };
    const held = heldSeed(who.key, { html: "<h1>seeded</h1>", manifest: MANIFEST, input_data: STARTER }, capped);
    await held.reached;
    const app = await appMadeBesides(who, [first.app_id]);
    const beside = await json<{ app_id: string }>(await callWith(capped, "/v1/apps", { key: who.key, json: { html: "<h1>plain</h1>", manifest: MANIFEST } }), 201);

    held.release();
    await expectError(await held.answer, 409, "account_quota_exceeded");
    expect(await count("apps", "id = ?1", app.id)).toBe(0);
    expect((await listedIds(who)).sort()).toEqual([first.app_id, beside.app_id].sort());
  });

  it("keeps what the create derives from its manifest: the answer carries the webhook secret, and the inbound hook takes deliveries once handed over", async () => {
    const who = await owner();
    const manifest = ingestManifest([{ name: "inbox", collection: "issues", map: { title: "title" } }], { webhooks: [{ on: "create", collection: "issues", url: "http://127.0.0.1:9/never" }] });
    const created = await json<{ app_id: string; webhook_secret?: string }>(await call("/v1/apps", {
      key: who.key, json: { html: "<p>x</p>", manifest, input_data: { issues: [{ data: { title: "starter" } }] } },
    }), 201);
    expect(created.webhook_secret).toMatch(/^whsec_/);
    expect(await traces(created.app_id)).toEqual({ apps: 1, versions: 1, hooks: 1, secrets: 1 });
    const hooks = await json<{ hooks: Array<{ name: string; url: string }> }>(await call(`/v1/apps/${created.app_id}/ingest-hooks`, { key: who.key }), 200);
    await json(await post(hooks.hooks.find((hook) => hook.name === "inbox")!.url, { title: "delivered" }), 200);
    const rows = await json<{ rows: Array<{ data: { title: string } }> }>(await call(`/v1/apps/${created.app_id}/collections/issues`, { key: who.key }), 200);
    expect(rows.rows.map((row) => row.data.title).sort()).toEqual(["delivered", "starter"]);
  });

  it("a seed that landed but whose answer was lost leaves nothing: the create answers the failure and the app is purged, rows and all", async () => {
    const who = await owner();
    const slug = uniqueSlug();
    await expectError(await seedAnswerLost(who.key, { html: "<h1>seeded</h1>", manifest: MANIFEST, slug, input_data: STARTER }), 500, "internal_error");
    expect(await count("apps", "slug = ?1", slug)).toBe(0);
    expect(await listedIds(who)).toEqual([]);
    // The slug is free for the retry, which makes the app whole.
    const retried = await json<{ app_id: string }>(await call("/v1/apps", { key: who.key, json: { html: "<h1>seeded</h1>", manifest: MANIFEST, slug, input_data: STARTER } }), 201);
    expect(await json<{ row_count: number }>(await call(`/v1/apps/${retried.app_id}`, { key: who.key }), 200)).toMatchObject({ row_count: 2 });
  });

  it("a hand-over that landed but whose answer was lost keeps the app: the create answers it made it, and it is listed with its rows", async () => {
    const who = await owner();
    const slug = uniqueSlug();
    const made = await json<{ app_id: string; slug: string; created: boolean }>(
      await handOverAnswerLost(who.key, { html: "<h1>seeded</h1>", manifest: MANIFEST, slug, input_data: STARTER }), 201);
    expect(made).toMatchObject({ slug, created: true });
    expect(await listedIds(who)).toEqual([made.app_id]);
    expect(await json<{ row_count: number }>(await call(`/v1/apps/${made.app_id}`, { key: who.key }), 200)).toMatchObject({ row_count: 2 });
    expect((await appCall(slug, "/")).status).toBe(200);
  });

  it("the cap's worth of creates still seeding refuses one more with starter rows, saying so; one without takes a free slot", async () => {
    const who = await owner();
    const capped = { MAX_APPS_PER_ACCOUNT: "2" };
    const body = { html: "<h1>seeded</h1>", manifest: MANIFEST, input_data: STARTER };
    const held = [heldSeed(who.key, body, capped), heldSeed(who.key, body, capped)];
    await Promise.all(held.map((create) => create.reached));
    const refused = await expectError(await callWith(capped, "/v1/apps", { key: who.key, json: body }), 409, "account_quota_exceeded");
    expect(refused.message).toMatch(/2 creates with starter rows still writing them/);
    expect(refused.details).toEqual({ limit: 2, resource: "apps" });
    const plain = await json<{ app_id: string }>(await callWith(capped, "/v1/apps", { key: who.key, json: { html: "<h1>plain</h1>", manifest: MANIFEST } }), 201);

    // Released, the first fills the second slot and the other is refused at the cap, as any app would be.
    held[0]!.release();
    await json(await held[0]!.answer, 201);
    held[1]!.release();
    const full = await expectError(await held[1]!.answer, 409, "account_quota_exceeded");
    expect(full.message).toMatch(/has 2 apps/);
    expect(await listedIds(who)).toHaveLength(2);
    expect(await listedIds(who)).toContain(plain.app_id);
  });

  it("one whose create died is purged by the seeds sweep once the seeding window has passed, and not before, with its hooks and webhook secret", async () => {
    expect(sweepNames()).toContain("seeds");
    const who = await owner();
    const manifest = ingestManifest([{ name: "inbox", collection: "issues" }], { webhooks: [{ on: "create", collection: "issues", url: "http://127.0.0.1:9/never" }] });
    const slug = uniqueSlug();
    const held = heldSeed(who.key, { html: "<p>x</p>", manifest, slug, input_data: { issues: [{ data: { title: "starter" } }] } });
    await held.reached;
    const app = await appMadeBesides(who, []);
    // What the create batched with its app landed with it, while the app is hidden.
    expect(await traces(app.id)).toEqual({ apps: 1, versions: 1, hooks: 1, secrets: 1 });

    await undoAbandonedSeeds(env, Date.now());
    await undoAbandonedSeeds(env, Date.now() + SEEDING_LAPSE_MS - 60_000);
    expect(await traces(app.id)).toEqual({ apps: 1, versions: 1, hooks: 1, secrets: 1 });
    expect(await undoAbandonedSeeds(env, Date.now() + SEEDING_LAPSE_MS + 60_000)).toBeGreaterThanOrEqual(1);
    expect(await traces(app.id)).toEqual({ apps: 0, versions: 0, hooks: 0, secrets: 0 });
    // The slug is free again.
    await json(await call("/v1/apps", { key: who.key, json: { html: "<p>again</p>", manifest: MANIFEST, slug } }), 201);

    // Had the create been alive after all (a seed slower than the window), it is told it was undone and leaves nothing.
    held.release();
    await expectError(await held.answer, 500, "internal_error");
    expect(await traces(app.id)).toEqual({ apps: 0, versions: 0, hooks: 0, secrets: 0 });
    expect(await listedIds(who)).not.toContain(app.id);
  });
});
