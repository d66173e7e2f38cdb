// POST /v1/apps/:id/versions (WIRE §2.2, §6.5; spec A Deploy package, Shapes 2; CONTRACT
// §6): carry-forward of whatever is not sent, the compatibility gate and force, dry runs
// both ways, refusals that change nothing, and concurrent redeploys that never skip or
// duplicate a version number.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, count, expectError, json } from "../helpers";
import {
  MANIFEST, PNG, WITH_SCHEDULE, appState, b64, deploy, manifestWith, notesCollection, owner, redeploy, sha256Hex, unchanged,
  uniqueText, versionRecord, type Owner,
} from "./fixtures";

function versions(o: Owner, appId: string, body: unknown) {
  return call(`/v1/apps/${appId}/versions`, { key: o.key, json: body });
}

async function documentOf(o: Owner, appId: string) {
  return json<{ html: string; version: number; source_hash: string }>(await call(`/v1/apps/${appId}/document`, { key: o.key }), 200);
}

/** A refused redeploy that must leave the app exactly as it was. */
async function refused(o: Owner, appId: string, body: unknown, status: number, code: Parameters<typeof expectError>[2]) {
  let e!: Awaited<ReturnType<typeof expectError>>;
  await unchanged(o, appId, async () => {
    e = await expectError(await versions(o, appId, body), status, code);
  });
  return e;
}

const twoCollections = manifestWith({ notes: notesCollection(), tags: notesCollection() });

describe("redeploy: carry-forward", () => {
  it("html only keeps the manifest and assets; manifest only keeps the html; assets replace the set; [] clears it", async () => {
    const o = await owner();
    const logo = { path: "logo.png", content_base64: b64(PNG) };
    const created = await deploy(o.key, { html: "<h1>one</h1>", assets: [logo] });
    const v1 = await versionRecord(created.app_id, 1);
    expect(v1.assets.map((a) => a.path)).toEqual(["logo.png"]);

    const r2 = await redeploy(o.key, created.app_id, { html: "<h1>two</h1>" });
    expect(r2).toEqual({ app_id: created.app_id, version: 2, compat: "clean" });
    const v2 = await versionRecord(created.app_id, 2);
    expect(v2.manifest).toEqual(MANIFEST);
    expect(v2.assets).toEqual(v1.assets);
    expect(v2.documentSha256).toBe(await sha256Hex(new TextEncoder().encode("<h1>two</h1>")));
    expect(v2.compat).toBe("clean");
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<h1>two</h1>", version: 2 });

    const r3 = await redeploy(o.key, created.app_id, { manifest: twoCollections });
    expect(r3).toEqual({ app_id: created.app_id, version: 3, compat: "clean" });
    const v3 = await versionRecord(created.app_id, 3);
    expect(v3.manifest).toEqual(twoCollections);
    expect(v3.documentSha256).toBe(v2.documentSha256);
    expect(v3.assets).toEqual(v1.assets);
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<h1>two</h1>", version: 3 });

    const csv = uniqueText("csv");
    const r4 = await redeploy(o.key, created.app_id, { assets: [{ path: "data.csv", content_base64: b64(csv) }] });
    expect(r4.version).toBe(4);
    const v4 = await versionRecord(created.app_id, 4);
    expect(v4.assets).toEqual([{ path: "data.csv", sha256: await sha256Hex(csv), size: csv.byteLength, mime: "text/csv" }]);
    expect(v4.manifest).toEqual(twoCollections);
    expect(v4.documentSha256).toBe(v2.documentSha256);

    const r5 = await redeploy(o.key, created.app_id, { assets: [] });
    expect(r5.version).toBe(5);
    const v5 = await versionRecord(created.app_id, 5);
    expect(v5.assets).toEqual([]);
    expect(v5.manifest).toEqual(twoCollections);
    expect(v5.documentSha256).toBe(v2.documentSha256);

    // Every field at once.
    const r6 = await redeploy(o.key, created.app_id, { html: "<h1>six</h1>", manifest: twoCollections, assets: [logo] });
    expect(r6.version).toBe(6);
    expect((await versionRecord(created.app_id, 6)).assets).toEqual(v1.assets);
    const row = await env.DB.prepare("SELECT current_version FROM apps WHERE id = ?1").bind(created.app_id).first<{ current_version: number }>();
    expect(row!.current_version).toBe(6);
    expect(await count("app_versions", "app_id = ?1", created.app_id)).toBe(6);
    // Old versions are immutable.
    expect(await versionRecord(created.app_id, 1)).toEqual(v1);
  });

  it("source_hash follows what makes a version: same inputs, same hash", async () => {
    const o = await owner();
    const created = await deploy(o.key, { html: "<p>a</p>" });
    const first = await documentOf(o, created.app_id);
    await redeploy(o.key, created.app_id, { html: "<p>b</p>" });
    const second = await documentOf(o, created.app_id);
    expect(second.source_hash).not.toBe(first.source_hash);
    await redeploy(o.key, created.app_id, { html: "<p>a</p>" });
    expect((await documentOf(o, created.app_id)).source_hash).toBe(first.source_hash);
  });

  it("warnings appear when the new manifest produces some, and a timezone silences the schedule warning", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const r = await redeploy(o.key, created.app_id, { manifest: WITH_SCHEDULE });
    expect(Object.keys(r).sort()).toEqual(["app_id", "compat", "version", "warnings"]);
    expect(r.warnings).toHaveLength(1);
    // Carried forward, the same manifest warns again.
    expect((await redeploy(o.key, created.app_id, { html: "<p>x</p>" })).warnings).toHaveLength(1);
    await json(await call(`/v1/apps/${created.app_id}`, { key: o.key, method: "PATCH", json: { timezone: "Europe/Paris" } }), 200);
    expect("warnings" in (await redeploy(o.key, created.app_id, { html: "<p>y</p>" }))).toBe(false);
  });

  it("accepts the app's slug in the path as well as its id", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    expect((await redeploy(o.key, created.slug, { html: "<p>by slug</p>" }))).toEqual({ app_id: created.app_id, version: 2, compat: "clean" });
  });
});

describe("redeploy: refused bodies", () => {
  it.each([
    ["an empty body", {}],
    ["only force", { force: true }],
    ["only dry_run", { dry_run: true }],
    ["force and dry_run", { force: true, dry_run: true }],
  ])("%s → 400 invalid_request (send html, manifest or assets)", async (_name, body) => {
    const o = await owner();
    const created = await deploy(o.key);
    const e = await refused(o, created.app_id, body, 400, "invalid_request");
    expect(e.details).toEqual({ field: "body" });
  });

  it.each([
    ["slug", { html: "<p>x</p>", slug: "new-slug" }],
    ["visibility", { html: "<p>x</p>", visibility: "public" }],
    ["an unknown field", { html: "<p>x</p>", colour: "red" }],
    ["html of the wrong type", { html: 1 }],
    ["force of the wrong type", { html: "<p>x</p>", force: "yes" }],
    ["assets as null", { assets: null }],
  ])("%s → 400 invalid_request naming it", async (name, body) => {
    const o = await owner();
    const created = await deploy(o.key);
    const e = await refused(o, created.app_id, body, 400, "invalid_request");
    const field = { "an unknown field": "colour", "html of the wrong type": "html", "force of the wrong type": "force", "assets as null": "assets" }[name] ?? name;
    expect(e.details?.field).toBe(field);
  });

  it("html over 2 MB, blank html and manifest errors change nothing", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await redeploy(o.key, created.app_id, { html: "<p>live</p>" });
    expect((await refused(o, created.app_id, { html: "x".repeat(2_097_153) }, 413, "document_size_exceeded")).details).toEqual({ field: "html", limit: 2_097_152 });
    expect((await refused(o, created.app_id, { html: " " }, 400, "invalid_request")).details).toEqual({ field: "html" });
    let e = await refused(o, created.app_id, { manifest: manifestWith({ Notes: notesCollection() }) }, 400, "collection_name_invalid");
    expect(e.details?.path).toBe("x-service-manifest.collections.Notes");
    e = await refused(o, created.app_id, { html: "<p>new</p>", manifest: manifestWith({ notes: notesCollection({ write: ["agent"] }) }) }, 400, "permission_role_invalid");
    expect(e.details?.path).toBe("x-service-manifest.collections.notes.write[0]");
    e = await refused(o, created.app_id, { manifest: { $schema: MANIFEST.$schema } }, 400, "manifest_invalid");
    expect(e.details?.path).toBe("x-service-manifest");
    // The same errors on a dry run.
    e = await refused(o, created.app_id, { manifest: { $schema: MANIFEST.$schema }, dry_run: true }, 400, "manifest_invalid");
    expect(e.details?.path).toBe("x-service-manifest");
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<p>live</p>", version: 2 });
  });

  it("an unknown app, another owner's app → 404 app_not_found; a deleted app → 410 soft_deleted", async () => {
    const o = await owner();
    const other = await owner();
    const created = await deploy(o.key);
    await expectError(await versions(o, "a000000000000000000000nope", { html: "<p>x</p>" }), 404, "app_not_found");
    await unchanged(o, created.app_id, async () => {
      for (const id of [created.app_id, created.slug]) {
        const e = await expectError(await versions(other, id, { html: "<p>stolen</p>" }), 404, "app_not_found");
        expect(e.details).toEqual({ app: id });
        await expectError(await versions(other, id, { html: "<p>stolen</p>", dry_run: true }), 404, "app_not_found");
      }
    });
    const deleted = await json<{ deleted_at: string }>(await call(`/v1/apps/${created.app_id}`, { key: o.key, method: "DELETE" }), 200);
    const before = await count("app_versions", "app_id = ?1", created.app_id);
    for (const body of [{ html: "<p>x</p>" }, { html: "<p>x</p>", dry_run: true }]) {
      const e = await expectError(await versions(o, created.app_id, body), 410, "soft_deleted");
      expect(e.details).toEqual({ app_id: created.app_id, deleted_at: deleted.deleted_at });
    }
    expect(await count("app_versions", "app_id = ?1", created.app_id)).toBe(before);
  });

  it("needs an agent key", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await unchanged(o, created.app_id, async () => {
      await expectError(await call(`/v1/apps/${created.app_id}/versions`, { json: { html: "<p>x</p>" } }), 401, "unauthorized");
      await expectError(await call(`/v1/apps/${created.app_id}/versions`, { session: o.human.session, json: { html: "<p>x</p>" } }), 401, "unauthorized");
    });
  });
});

describe("redeploy: compatibility gate", () => {
  const base = manifestWith({ notes: notesCollection(), tags: notesCollection() });

  const breaking: Array<[string, Record<string, unknown>, string]> = [
    ["a removed collection", manifestWith({ notes: notesCollection() }), "x-service-manifest.collections.tags"],
    ["read widened to anyone", manifestWith({ notes: notesCollection({ read: ["anyone"] }), tags: notesCollection() }), "x-service-manifest.collections.notes.read"],
    ["made append-only", manifestWith({ notes: notesCollection({ appendOnly: true }), tags: notesCollection() }), "x-service-manifest.collections.notes.appendOnly"],
    ["a capability added", manifestWith({ notes: notesCollection(), tags: notesCollection() }, { capabilities: ["camera"] }), "x-service-manifest.capabilities[0]"],
    ["cdn turned on", manifestWith({ notes: notesCollection(), tags: notesCollection() }, { cdn: true }), "x-service-manifest.cdn"],
    ["a new external host", manifestWith({ notes: notesCollection(), tags: notesCollection() }, { externalHosts: ["https://api.example.com"] }), "x-service-manifest.externalHosts[0]"],
    ["a new embed", manifestWith({ notes: notesCollection(), tags: notesCollection() }, { embeds: ["https://www.youtube.com"] }), "x-service-manifest.embeds[0]"],
    ["a tightened schema", {
      ...manifestWith({ notes: notesCollection(), tags: notesCollection() }),
      $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 10 }, tag: { type: "string", maxLength: 40 }, due: { type: "string", maxLength: 40 } }, required: ["text"], additionalProperties: false } },
    }, "$defs.Note"],
  ];

  it.each(breaking)("%s → 422 manifest_incompatible_redeploy with details.breaks; nothing changes", async (_name, next, pathPrefix) => {
    const o = await owner();
    const created = await deploy(o.key, { html: "<p>live</p>", manifest: base });
    const e = await refused(o, created.app_id, { html: "<p>new</p>", manifest: next }, 422, "manifest_incompatible_redeploy");
    expect(Object.keys(e.details!)).toEqual(["breaks"]);
    const breaks = e.details!.breaks as Array<{ path: string; message: string }>;
    expect(breaks.length).toBeGreaterThan(0);
    for (const b of breaks) {
      expect(Object.keys(b).sort()).toEqual(["message", "path"]);
      expect(b.message.length).toBeGreaterThan(0);
    }
    expect(breaks.some((b) => b.path.startsWith(pathPrefix))).toBe(true);
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<p>live</p>", version: 1 });
    expect((await versionRecord(created.app_id, 1)).manifest).toEqual(base);
  });

  it("the break for a removed collection names it", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: base });
    const e = await refused(o, created.app_id, { manifest: manifestWith({ notes: notesCollection() }) }, 422, "manifest_incompatible_redeploy");
    expect(e.details).toEqual({ breaks: [{ path: "x-service-manifest.collections.tags", message: expect.stringContaining("tags") }] });
    expect(e.message).toMatch(/1 break\b/);
  });

  it("force: true deploys anyway, answers compat forced with the breaks, and records them", async () => {
    const o = await owner();
    const created = await deploy(o.key, { html: "<p>live</p>", manifest: base });
    const next = manifestWith({ notes: notesCollection({ read: ["anyone"] }) }, { capabilities: ["camera"] });
    const r = await redeploy(o.key, created.app_id, { html: "<p>forced</p>", manifest: next, force: true });
    expect(Object.keys(r).sort()).toEqual(["app_id", "breaks", "compat", "version"]);
    expect(r).toMatchObject({ app_id: created.app_id, version: 2, compat: "forced" });
    expect(r.breaks!.map((b) => b.path).sort()).toEqual([
      "x-service-manifest.capabilities[0]", "x-service-manifest.collections.notes.read", "x-service-manifest.collections.tags",
    ]);
    const v2 = await versionRecord(created.app_id, 2);
    expect(v2).toMatchObject({ compat: "forced", breaks: r.breaks, manifest: next });
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<p>forced</p>", version: 2 });
    // force on a clean redeploy is just clean.
    expect(await redeploy(o.key, created.app_id, { html: "<p>again</p>", force: true })).toEqual({ app_id: created.app_id, version: 3, compat: "clean" });
    expect((await versionRecord(created.app_id, 3)).breaks).toBeNull();
  });

  it.each([
    ["read narrowed from anyone to owner", { notes: notesCollection({ read: ["anyone"] }) }, { notes: notesCollection({ read: ["owner"] }) }],
    ["read narrowed from member to owner", { notes: notesCollection({ read: ["member", "owner"] }) }, { notes: notesCollection({ read: ["owner"] }) }],
    ["read emptied", { notes: notesCollection() }, { notes: notesCollection({ read: [] }) }],
    ["unique added", { notes: notesCollection() }, { notes: notesCollection({ unique: ["tag"] }) }],
    ["update narrowed to creator", { notes: notesCollection({ write: ["owner", "member"] }) }, { notes: notesCollection({ write: ["owner", "member"], update: ["creator"] }) }],
    ["a collection added", { notes: notesCollection() }, { notes: notesCollection(), extra: notesCollection() }],
    ["a schema loosened", { notes: notesCollection() }, { notes: notesCollection({ schema: undefined }) }],
  ])("narrowing never trips the gate: %s", async (_name, from, to) => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: manifestWith(from) });
    expect(await redeploy(o.key, created.app_id, { manifest: manifestWith(to) })).toEqual({ app_id: created.app_id, version: 2, compat: "clean" });
  });

  it("removing capabilities, hosts, embeds and cdn is clean", async () => {
    const o = await owner();
    const wide = manifestWith(undefined, { capabilities: ["camera"], externalHosts: ["https://api.example.com"], embeds: ["https://www.youtube.com"], cdn: true });
    const created = await deploy(o.key, { manifest: wide });
    expect(await redeploy(o.key, created.app_id, { manifest: MANIFEST })).toEqual({ app_id: created.app_id, version: 2, compat: "clean" });
  });
});

describe("redeploy: dry run", () => {
  it("clean: { ok: true, warnings: [], compat: clean }, nothing written", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const html = `<p>${crypto.randomUUID()}</p>`;
    await unchanged(o, created.app_id, async () => {
      const body = await json(await versions(o, created.app_id, { html, dry_run: true }), 200);
      expect(body).toEqual({ ok: true, warnings: [], compat: "clean" });
    });
    expect((await env.BLOBS.list({ prefix: `doc/${await sha256Hex(new TextEncoder().encode(html))}` })).objects).toEqual([]);
  });

  it("incompatible: { ok: false, compat: incompatible, breaks }, nothing written", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: twoCollections });
    await unchanged(o, created.app_id, async () => {
      const body = await json<Record<string, unknown>>(await versions(o, created.app_id, { manifest: MANIFEST, dry_run: true }), 200);
      expect(body).toEqual({ ok: false, warnings: [], compat: "incompatible", breaks: [{ path: "x-service-manifest.collections.tags", message: expect.any(String) }] });
    });
  });

  it("with force: { ok: true, compat: forced, breaks } (CONTRACT §6), nothing written", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: twoCollections });
    await unchanged(o, created.app_id, async () => {
      const body = await json<Record<string, unknown>>(await versions(o, created.app_id, { manifest: MANIFEST, force: true, dry_run: true }), 200);
      expect(body).toEqual({ ok: true, warnings: [], compat: "forced", breaks: [{ path: "x-service-manifest.collections.tags", message: expect.any(String) }] });
    });
  });

  it("carries warnings and resolves omitted fields exactly as a real redeploy", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: WITH_SCHEDULE });
    const dry = await json<{ ok: boolean; warnings: string[]; compat: string }>(await versions(o, created.app_id, { html: "<p>x</p>", dry_run: true }), 200);
    expect(dry).toMatchObject({ ok: true, compat: "clean" });
    expect(dry.warnings).toHaveLength(1);
  });

  it("ok is false exactly when the real, unforced redeploy is refused", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: twoCollections });
    const candidates = [
      MANIFEST,
      twoCollections,
      manifestWith({ notes: notesCollection({ read: ["anyone"] }), tags: notesCollection() }),
      manifestWith({ notes: notesCollection({ read: [] }), tags: notesCollection() }),
      manifestWith({ notes: notesCollection(), tags: notesCollection() }, { capabilities: ["microphone"] }),
      manifestWith({ notes: notesCollection(), tags: notesCollection(), more: notesCollection() }),
    ];
    for (const manifest of candidates) {
      const dry = await json<{ ok: boolean; compat: string; breaks?: unknown[] }>(await versions(o, created.app_id, { manifest, dry_run: true }), 200);
      const before = await versionRecord(created.app_id, (await env.DB.prepare("SELECT current_version AS v FROM apps WHERE id = ?1").bind(created.app_id).first<{ v: number }>())!.v);
      const real = await versions(o, created.app_id, { manifest });
      if (dry.ok) {
        const body = await json<{ compat: string }>(real, 200);
        expect(body.compat).toBe(dry.compat);
        // Put the base back so each candidate is judged against the same live manifest.
        await json(await versions(o, created.app_id, { manifest: before.manifest, force: true }), 200);
      } else {
        expect(dry.compat).toBe("incompatible");
        const e = await expectError(real, 422, "manifest_incompatible_redeploy");
        expect(e.details!.breaks).toEqual(dry.breaks);
      }
    }
  });
});

describe("redeploy: concurrency", () => {
  it("parallel redeploys never skip or duplicate a version; losers are told to retry", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => versions(o, created.app_id, { html: `<p>parallel ${i}</p>` })));
    const won: number[] = [];
    for (const res of responses) {
      if (res.status === 200) won.push((await res.json<{ version: number }>()).version);
      else {
        const e = await expectError(res, 409, "conflict");
        expect(typeof e.details?.current_version).toBe("number");
      }
    }
    expect(won.length).toBeGreaterThan(0);
    expect(new Set(won).size).toBe(won.length);
    const rows = await env.DB.prepare("SELECT version FROM app_versions WHERE app_id = ?1 ORDER BY version").bind(created.app_id).all<{ version: number }>();
    const numbers = rows.results.map((r) => r.version);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    expect(numbers.length).toBe(1 + won.length);
    const app = await env.DB.prepare("SELECT current_version FROM apps WHERE id = ?1").bind(created.app_id).first<{ current_version: number }>();
    expect(app!.current_version).toBe(numbers.length);
    // The live document is the winner of the last version.
    const doc = await documentOf(o, created.app_id);
    expect(doc.version).toBe(numbers.length);
    // Sequential redeploys afterwards continue the sequence.
    expect((await redeploy(o.key, created.app_id, { html: "<p>after</p>" })).version).toBe(numbers.length + 1);
  });

  it("the live version always has its record (readers never see a version without one)", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const writers = Array.from({ length: 5 }, (_, i) => versions(o, created.app_id, { html: `<p>w ${i}</p>` }).then((r) => r.arrayBuffer()));
    const readers = Array.from({ length: 10 }, () => call(`/v1/apps/${created.app_id}/document`, { key: o.key }));
    const read = await Promise.all(readers);
    await Promise.all(writers);
    for (const res of read) expect(res.status).toBe(200);
    const state = await appState(created.app_id, o.key);
    expect(state.versions).toBe(state.row!.current_version);
  });

  it("a version record that cannot be written leaves the app on its live version", async () => {
    const o = await owner();
    const created = await deploy(o.key, { html: "<p>live</p>" });
    // A stray record for version 2 (as a half-finished write would leave) makes the insert fail.
    await env.DB.prepare(
      "INSERT INTO app_versions (app_id, version, manifest_json, document_sha256, document_bytes, assets_json, source_hash, compat, breaks_json, created_by_agent_id, created_at) " +
      "SELECT app_id, 2, manifest_json, 'stray', 0, assets_json, 'stray', 'clean', NULL, created_by_agent_id, created_at FROM app_versions WHERE app_id = ?1 AND version = 1",
    ).bind(created.app_id).run();
    await unchanged(o, created.app_id, async () => {
      await expectError(await versions(o, created.app_id, { html: "<p>new</p>" }), 500, "internal_error");
    });
    const row = await env.DB.prepare("SELECT current_version FROM apps WHERE id = ?1").bind(created.app_id).first<{ current_version: number }>();
    expect(row!.current_version).toBe(1);
    expect(await documentOf(o, created.app_id)).toMatchObject({ html: "<p>live</p>", version: 1 });
  });
});

describe("redeploy: live rows", () => {
  const rowsOf = async (o: Owner, appId: string, collection: string) => call(`/v1/apps/${appId}/collections/${collection}`, { key: o.key });

  it("a force-removed collection is detached, not deleted: putting it back brings its rows back", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: twoCollections });
    for (const text of ["one", "two"]) await json(await call(`/v1/apps/${created.app_id}/collections/tags`, { key: o.key, json: { data: { text } } }), 201);
    const forced = await redeploy(o.key, created.app_id, { manifest: MANIFEST, force: true });
    expect(forced.compat).toBe("forced");
    await expectError(await rowsOf(o, created.app_id, "tags"), 404, "collection_not_found");
    expect((await redeploy(o.key, created.app_id, { manifest: twoCollections })).compat).toBe("clean");
    const back = await json<{ rows: Array<{ data: { text: string } }> }>(await rowsOf(o, created.app_id, "tags"), 200);
    expect(back.rows.map((r) => r.data.text).sort()).toEqual(["one", "two"]);
  });

  it("a refused redeploy leaves the rows' collection as it was", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: twoCollections });
    await json(await call(`/v1/apps/${created.app_id}/collections/tags`, { key: o.key, json: { data: { text: "kept" } } }), 201);
    await refused(o, created.app_id, { manifest: MANIFEST }, 422, "manifest_incompatible_redeploy");
    const rows = await json<{ rows: unknown[] }>(await rowsOf(o, created.app_id, "tags"), 200);
    expect(rows.rows).toHaveLength(1);
  });

  // Adding unique over live rows that share a value: see seed-unique.test.ts.
});

