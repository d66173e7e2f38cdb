// POST /v1/apps (WIRE §2.2, spec A App / Deploy package / Shapes 1 and 3): the created
// app's shape, visibility and slug rules, dry runs, the document cap, the body cap, body
// validation, manifest errors surfacing from the compiler, and the per-account app cap.
// Every refusal is checked to have changed nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, claimedAgent, count, expectError, json, register } from "../helpers";
import {
  MANIFEST, WITH_SCHEDULE, appState, blobKeys, deploy, manifestWith, notesCollection, owner, ownerCounts, sha256Hex, unchanged,
  type Created, type Owner,
} from "./fixtures";

const APP_ID = /^[a-z][a-z0-9]{20,}$/;

function post(o: Owner | string, body: Record<string, unknown>) {
  return call("/v1/apps", { key: typeof o === "string" ? o : o.key, json: body });
}

/** Asserts a create is refused with `code` and nothing of the owner's changed. */
async function refused(o: Owner, body: Record<string, unknown>, status: number, code: Parameters<typeof expectError>[2]) {
  let envelope!: Awaited<ReturnType<typeof expectError>>;
  await unchanged(o, null, async () => {
    envelope = await expectError(await post(o, body), status, code);
  });
  return envelope;
}

describe("create: success", () => {
  it("answers 201 with exactly the deploy shape; private by default; stores app, version and document", async () => {
    const o = await owner();
    const html = `<!doctype html><h1>Hello ${crypto.randomUUID()}</h1>`;
    const res = await post(o, { html, manifest: MANIFEST });
    const body = await json<Created>(res, 201);
    expect(Object.keys(body).sort()).toEqual(["app_id", "created", "slug", "url", "version", "visibility"]);
    expect(body.app_id).toMatch(APP_ID);
    expect(body).toMatchObject({ visibility: "private", version: 1, created: true });
    expect(body.url).toBe(`http://${body.slug}.localhost:8787/`);
    // A friendly slug from the app name plus a random suffix.
    expect(body.slug).toMatch(/^notes-[a-z0-9]{6}$/);

    const row = await env.DB.prepare("SELECT * FROM apps WHERE id = ?1").bind(body.app_id).first<Record<string, unknown>>();
    expect(row).toMatchObject({
      slug: body.slug, owner_human_id: o.human.humanId, created_by_agent_id: o.agent.agent_id, visibility: "private",
      status: "active", current_version: 1, timezone: null, share_token_hash: null, deleted_at: null,
    });
    const version = await env.DB.prepare("SELECT * FROM app_versions WHERE app_id = ?1").bind(body.app_id).all<Record<string, unknown>>();
    expect(version.results).toHaveLength(1);
    const sha = await sha256Hex(new TextEncoder().encode(html));
    expect(version.results[0]).toMatchObject({
      version: 1, compat: "new", breaks_json: null, document_sha256: sha, document_bytes: new TextEncoder().encode(html).byteLength,
      assets_json: "[]", created_by_agent_id: o.agent.agent_id,
    });
    expect(JSON.parse(version.results[0].manifest_json as string)).toEqual(MANIFEST);
    expect(await blobKeys(`doc/${sha}`)).toEqual([`doc/${sha}`]);
    const object = await env.BLOBS.head(`doc/${sha}`);
    expect(object?.httpMetadata?.contentType).toBe("text/html; charset=utf-8");

    const doc = await json<{ html: string; version: number; source_hash: string }>(await call(`/v1/apps/${body.app_id}/document`, { key: o.key }), 200);
    expect(Object.keys(doc).sort()).toEqual(["html", "source_hash", "version"]);
    expect(doc).toMatchObject({ html, version: 1 });
    expect(doc.source_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.source_hash).toBe(version.results[0].source_hash);
  });

  it("public with a chosen slug", async () => {
    const o = await owner();
    const slug = `pub-${crypto.randomUUID().slice(0, 8)}`;
    const body = await deploy(o.key, { visibility: "public", slug });
    expect(Object.keys(body).sort()).toEqual(["app_id", "created", "slug", "url", "version", "visibility"]);
    expect(body).toMatchObject({ slug, visibility: "public", url: `http://${slug}.localhost:8787/`, version: 1, created: true });
  });

  it("private with a chosen slug, at both length bounds", async () => {
    const o = await owner();
    const three = `${crypto.randomUUID().replace(/[^a-z]/g, "").slice(0, 2)}z`;
    const short = await post(o, { html: "<p>x</p>", manifest: MANIFEST, slug: three });
    // Three characters may already be taken by another test run; either outcome is a clean answer.
    if (short.status === 409) await expectError(short, 409, "slug_taken");
    else expect((await json<Created>(short, 201)).slug).toBe(three);
    const long = `x${crypto.randomUUID().replace(/-/g, "")}`.padEnd(62, "a") + "z";
    expect(long).toHaveLength(63);
    expect((await deploy(o.key, { slug: long })).slug).toBe(long);
  });

  it("link: server-chosen long unguessable slug and a share_url with #k=, shown once", async () => {
    const o = await owner();
    const a = await deploy(o.key, { visibility: "link" });
    const b = await deploy(o.key, { visibility: "link" });
    for (const body of [a, b]) {
      expect(Object.keys(body).sort()).toEqual(["app_id", "created", "share_url", "slug", "url", "version", "visibility"]);
      expect(body.visibility).toBe("link");
      expect(body.slug).toMatch(/^[a-z][a-z0-9]{23}$/);
      expect(body.share_url).toMatch(new RegExp(`^${body.url.replace(/[.]/g, "\\.")}#k=[0-9a-f]{32}$`));
    }
    expect(a.slug).not.toBe(b.slug);
    expect(a.share_url).not.toBe(b.share_url);
    // Only the token's hash is kept.
    const row = await env.DB.prepare("SELECT share_token_hash FROM apps WHERE id = ?1").bind(a.app_id).first<{ share_token_hash: string }>();
    expect(row!.share_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.share_token_hash).not.toContain(a.share_url!.split("#k=")[1]);
    // The detail never repeats the URL.
    const detail = await json<Record<string, unknown>>(await call(`/v1/apps/${a.app_id}`, { key: o.key }), 200);
    expect(detail.has_share_token).toBe(true);
    expect(JSON.stringify(detail)).not.toContain("#k=");
  });

  it("warnings appear only when there are some", async () => {
    const o = await owner();
    const withWarnings = await deploy(o.key, { manifest: WITH_SCHEDULE });
    expect(withWarnings.warnings).toHaveLength(1);
    expect(withWarnings.warnings![0]).toMatch(/timezone/);
    const without = await deploy(o.key);
    expect("warnings" in without).toBe(false);
  });

  it("accepts a deploy body larger than the ordinary JSON cap (the deploy cap applies)", async () => {
    const o = await owner();
    const html = `<p>${"x".repeat(1_200_000)}</p>`;
    const created = await deploy(o.key, { html });
    expect((await appState(created.app_id, o.key)).html).toBe(html);
  });

  it("accepts a document of exactly 2 MB", async () => {
    const o = await owner();
    const html = "<p>" + "x".repeat(2_097_152 - 7) + "</p>";
    expect(new TextEncoder().encode(html).byteLength).toBe(2_097_152);
    await deploy(o.key, { html });
  });
});

describe("create: dry run", () => {
  it("answers 200 { ok: true, warnings } and persists nothing", async () => {
    const o = await owner();
    const html = `<h1>dry ${crypto.randomUUID()}</h1>`;
    const sha = await sha256Hex(new TextEncoder().encode(html));
    await unchanged(o, null, async () => {
      const body = await json(await post(o, { html, manifest: MANIFEST, dry_run: true }), 200);
      expect(body).toEqual({ ok: true, warnings: [] });
    });
    expect(await ownerCounts(o.human.humanId)).toEqual({ apps: 0, versions: 0 });
    expect(await blobKeys(`doc/${sha}`)).toEqual([]);
    const withWarnings = await json<{ ok: boolean; warnings: string[] }>(await post(o, { html, manifest: WITH_SCHEDULE, dry_run: true }), 200);
    expect(withWarnings.ok).toBe(true);
    expect(withWarnings.warnings).toHaveLength(1);
    // dry_run: false is a real deploy.
    const real = await json<Created>(await post(o, { html, manifest: MANIFEST, dry_run: false }), 201);
    expect(real.created).toBe(true);
  });

  it("returns the same error a real deploy would", async () => {
    const o = await owner();
    const bad = manifestWith({ notes: notesCollection({ read: undefined }) });
    const dry = await refused(o, { html: "<p>x</p>", manifest: bad, dry_run: true }, 400, "permission_role_invalid");
    const real = await refused(o, { html: "<p>x</p>", manifest: bad }, 400, "permission_role_invalid");
    expect(dry.details).toEqual(real.details);
    await refused(o, { html: "", manifest: MANIFEST, dry_run: true }, 400, "invalid_request");
    await refused(o, { html: "<p>x</p>", manifest: MANIFEST, visibility: "link", slug: "some-slug", dry_run: true }, 400, "slug_not_allowed_for_link");
    await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug: "admin", dry_run: true }, 400, "invalid_request");
  });

  it("reports a taken slug and a full account, as the real deploy would", async () => {
    const o = await owner();
    const slug = `dry-${crypto.randomUUID().slice(0, 8)}`;
    await deploy(o.key, { slug });
    await unchanged(o, null, async () => {
      await expectError(await post(o, { html: "<p>x</p>", manifest: MANIFEST, slug, dry_run: true }), 409, "slug_taken");
      const full = await callWith({ MAX_APPS_PER_ACCOUNT: "1" }, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, dry_run: true } });
      await expectError(full, 409, "account_quota_exceeded");
    });
  });
});

describe("create: who may deploy", () => {
  it("an unclaimed agent gets 403 agent_not_claimed and creates nothing", async () => {
    const agent = await register("loner");
    for (const dry_run of [false, true]) {
      const e = await expectError(await post(agent.api_key, { html: "<p>x</p>", manifest: MANIFEST, dry_run }), 403, "agent_not_claimed");
      expect(e.message).toMatch(/claim/);
    }
    expect(await count("apps", "created_by_agent_id = ?1", agent.agent_id)).toBe(0);
  });

  it("no key → 401 unauthorized; an unknown key → 401 invalid_api_key; a session cookie alone is not enough", async () => {
    const o = await owner();
    await expectError(await call("/v1/apps", { json: { html: "<p>x</p>", manifest: MANIFEST } }), 401, "unauthorized");
    await expectError(await call("/v1/apps", { key: `svc_${"0".repeat(32)}`, json: { html: "<p>x</p>", manifest: MANIFEST } }), 401, "invalid_api_key");
    await expectError(await call("/v1/apps", { authorization: "Basic abc", json: { html: "<p>x</p>", manifest: MANIFEST } }), 401, "unauthorized");
    await expectError(await call("/v1/apps", { session: o.human.session, json: { html: "<p>x</p>", manifest: MANIFEST } }), 401, "unauthorized");
    expect(await ownerCounts(o.human.humanId)).toEqual({ apps: 0, versions: 0 });
  });
});

describe("create: client version", () => {
  it("a CLI older than MIN_CLI_VERSION → 426 cli_upgrade_required and nothing is created; a current one deploys", async () => {
    const o = await owner();
    await unchanged(o, null, async () => {
      const e = await expectError(await call("/v1/apps", { key: o.key, cliVersion: "0.0.9", json: { html: "<p>x</p>", manifest: MANIFEST } }), 426, "cli_upgrade_required");
      expect(e.details).toMatchObject({ min_version: "0.1.0", your_version: "0.0.9" });
    });
    await json(await call("/v1/apps", { key: o.key, cliVersion: "0.1.0", json: { html: "<p>x</p>", manifest: MANIFEST } }), 201);
  });
});

describe("create: slugs", () => {
  it("slug with visibility link → 400 slug_not_allowed_for_link", async () => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, visibility: "link", slug: `ln-${crypto.randomUUID().slice(0, 8)}` }, 400, "slug_not_allowed_for_link");
    expect(e.details).toEqual({ field: "slug" });
  });

  it("a taken slug → 409 slug_taken, whoever holds it", async () => {
    const a = await owner();
    const b = await owner();
    const slug = `taken-${crypto.randomUUID().slice(0, 8)}`;
    await deploy(a.key, { slug });
    for (const o of [a, b]) {
      for (const visibility of ["private", "public"]) {
        const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug, visibility }, 409, "slug_taken");
        expect(e.details).toEqual({ field: "slug" });
      }
    }
    expect(await count("apps", "slug = ?1", slug)).toBe(1);
  });

  it("a case variant of a taken slug never makes a second app (slugs are lowercase DNS labels)", async () => {
    const o = await owner();
    const slug = `case-${crypto.randomUUID().slice(0, 8)}`;
    await deploy(o.key, { slug });
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug: slug.toUpperCase() }, 400, "invalid_request");
    expect(e.details).toMatchObject({ field: "slug" });
    expect(await count("apps", "lower(slug) = ?1", slug)).toBe(1);
  });

  it("two concurrent creates with the same slug: exactly one 201, the other 409 slug_taken", async () => {
    const o = await owner();
    for (let round = 0; round < 3; round++) {
      const slug = `race-${crypto.randomUUID().slice(0, 8)}`;
      const responses = await Promise.all([0, 1, 2].map(() => post(o, { html: "<p>x</p>", manifest: MANIFEST, slug })));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409]);
      for (const r of responses) {
        if (r.status === 409) await expectError(r, 409, "slug_taken");
        else await r.arrayBuffer();
      }
      expect(await count("apps", "slug = ?1", slug)).toBe(1);
      expect(await count("app_versions", "app_id IN (SELECT id FROM apps WHERE slug = ?1)", slug)).toBe(1);
    }
  });

  it.each(["www", "api", "admin", "console", "login", "localhost", "relay", "svc", "static", "docs"])("reserved slug %s → 400", async (slug) => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug }, 400, "invalid_request");
    expect(e.details).toEqual({ field: "slug" });
  });

  it.each([
    ["underscore", "my_app"], ["space", "my app"], ["dot", "my.app"], ["leading hyphen", "-myapp"], ["trailing hyphen", "myapp-"],
    ["double hyphen", "my--app"], ["punycode prefix", "xn--bcher-kva"], ["non-ASCII", "bücher"], ["uppercase", "MyApp"],
    ["too short", "ab"], ["one char", "a"], ["empty", ""], ["slash", "a/b"], ["newline", "abc\n"],
  ])("bad slug (%s) → 400 invalid_request naming slug", async (_name, slug) => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug }, 400, "invalid_request");
    expect(e.details).toMatchObject({ field: "slug" });
  });

  it("a 64-character slug → 400 invalid_request naming slug", async () => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, slug: "a".repeat(64) }, 400, "invalid_request");
    expect(e.details).toMatchObject({ field: "slug" });
  });
});

describe("create: document and body", () => {
  it("html over 2 MB (UTF-8 bytes) → 413 document_size_exceeded", async () => {
    const o = await owner();
    const ascii = "x".repeat(2_097_153);
    let e = await refused(o, { html: ascii, manifest: MANIFEST }, 413, "document_size_exceeded");
    expect(e.details).toEqual({ field: "html", limit: 2_097_152 });
    // 1,048,577 two-byte characters: under 2 M characters, over 2 MB.
    const accented = "é".repeat(1_048_577);
    e = await refused(o, { html: accented, manifest: MANIFEST }, 413, "document_size_exceeded");
    expect(e.details).toEqual({ field: "html", limit: 2_097_152 });
    await refused(o, { html: ascii, manifest: MANIFEST, dry_run: true }, 413, "document_size_exceeded");
  });

  it("empty or blank html → 400 invalid_request naming html", async () => {
    const o = await owner();
    for (const html of ["", "   \n\t"]) {
      const e = await refused(o, { html, manifest: MANIFEST }, 400, "invalid_request");
      expect(e.details).toEqual({ field: "html" });
    }
  });

  it("a body over MAX_DEPLOY_BODY_BYTES → 413 payload_too_large", async () => {
    const o = await owner();
    await unchanged(o, null, async () => {
      const res = await callWith({ MAX_DEPLOY_BODY_BYTES: "2000" }, "/v1/apps", { key: o.key, json: { html: "x".repeat(3000), manifest: MANIFEST } });
      const e = await expectError(res, 413, "payload_too_large");
      expect(e.details).toEqual({ limit: 2000 });
    });
    // The same cap with no Content-Length (a streamed body) is enforced while reading.
    await unchanged(o, null, async () => {
      const text = JSON.stringify({ html: "x".repeat(3000), manifest: MANIFEST });
      const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(text)); c.close(); } });
      const res = await callWith({ MAX_DEPLOY_BODY_BYTES: "2000" }, "/v1/apps", { key: o.key, body: stream, contentType: "application/json", method: "POST" });
      await expectError(res, 413, "payload_too_large");
    });
  });

  it.each([
    ["an unknown field", { colour: "red" }, "colour"],
    ["webhook_secret", { webhook_secret: "x" }, "webhook_secret"],
    ["html of the wrong type", { html: 5 }, "html"],
    ["html null", { html: null }, "html"],
    ["an unknown visibility", { visibility: "secret" }, "visibility"],
    ["slug of the wrong type", { slug: 7 }, "slug"],
    ["dry_run of the wrong type", { dry_run: "yes" }, "dry_run"],
    ["assets as an object", { assets: {} }, "assets"],
  ])("%s → 400 invalid_request naming the field (a manifest that is no object: manifest-shape.test.ts)", async (_name, patch, field) => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest: MANIFEST, ...patch }, 400, "invalid_request");
    expect(e.details?.field).toBe(field);
  });

  it("missing html or manifest → 400 naming it", async () => {
    const o = await owner();
    expect((await refused(o, { manifest: MANIFEST }, 400, "invalid_request")).details?.field).toBe("html");
    expect((await refused(o, { html: "<p>x</p>" }, 400, "invalid_request")).details?.field).toBe("manifest");
  });

  it("a body that is not a JSON object → 400 invalid_request", async () => {
    const o = await owner();
    await unchanged(o, null, async () => {
      for (const body of ["[]", "null", "42", "{", "not json"]) {
        const e = await expectError(await call("/v1/apps", { key: o.key, body, contentType: "application/json", method: "POST" }), 400, "invalid_request");
        expect(e.details?.field).toBe("body");
      }
      await expectError(await call("/v1/apps", { key: o.key, method: "POST" }), 400, "invalid_request");
      const e = await expectError(await call("/v1/apps", { key: o.key, body: JSON.stringify({ html: "<p>x</p>", manifest: MANIFEST }), contentType: "text/plain", method: "POST" }), 400, "invalid_request");
      expect(e.details?.field).toBe("content-type");
    });
  });
});

describe("create: manifest errors surface with their code and path", () => {
  const doc = (ext: Record<string, unknown>) => ({ $schema: "https://json-schema.org/draft/2020-12/schema", $defs: MANIFEST.$defs, ...ext });

  it.each([
    ["missing x-service-manifest", doc({}), "manifest_invalid", "x-service-manifest"],
    ["x-service-manifest not an object", doc({ "x-service-manifest": [] }), "manifest_invalid", "x-service-manifest"],
    ["an unknown key in the extension", doc({ "x-service-manifest": { app: { name: "N" }, colour: "red" } }), "manifest_invalid", "x-service-manifest.colour"],
    ["a wrong $schema", { ...MANIFEST, $schema: "http://json-schema.org/draft-07/schema#" }, "manifest_invalid", "$schema"],
    ["a bad collection name", manifestWith({ "Bad Name": notesCollection() }), "collection_name_invalid", "x-service-manifest.collections.Bad Name"],
    ["the retired agent subject", manifestWith({ notes: notesCollection({ read: ["agent"] }) }), "permission_role_invalid", "x-service-manifest.collections.notes.read[0]"],
    ["a missing read list", manifestWith({ notes: notesCollection({ read: undefined }) }), "permission_role_invalid", "x-service-manifest.collections.notes.read"],
    ["a schema ref to nowhere", manifestWith({ notes: notesCollection({ schema: { $ref: "#/$defs/Nope" } }) }), "collection_schema_invalid", "x-service-manifest.collections.notes.schema.$ref"],
    ["an unknown capability", manifestWith(undefined, { capabilities: ["teleport"] }), "capability_invalid", "x-service-manifest.capabilities[0]"],
    ["an http external host", manifestWith(undefined, { externalHosts: ["http://api.example.com"] }), "external_host_invalid", "x-service-manifest.externalHosts[0]"],
    ["an external host on a private network", manifestWith(undefined, { externalHosts: ["https://api.example.com", "https://db.corp.internal"] }), "external_host_invalid", "x-service-manifest.externalHosts[1]"],
    ["an embed on a visitor's own network", manifestWith(undefined, { embeds: ["https://nas.local"] }), "embed_invalid", "x-service-manifest.embeds[0]"],
  ])("%s", async (_name, manifest, code, path) => {
    const o = await owner();
    const e = await refused(o, { html: "<p>x</p>", manifest }, 400, code as "manifest_invalid");
    expect(e.details?.path).toBe(path);
  });

  it("too many collections → 400 too_many_collections with the limit", async () => {
    const o = await owner();
    const res = await callWith({ MAX_COLLECTIONS_PER_APP: "2" }, "/v1/apps", {
      key: o.key, json: { html: "<p>x</p>", manifest: manifestWith({ a: notesCollection(), b: notesCollection(), c: notesCollection() }) },
    });
    const e = await expectError(res, 400, "too_many_collections");
    expect(e.details).toEqual({ path: "x-service-manifest.collections", limit: 2 });
    expect(await ownerCounts(o.human.humanId)).toEqual({ apps: 0, versions: 0 });
  });

  it("an app may not list its own origin in externalHosts or embeds", async () => {
    const o = await owner();
    const prod = { API_ORIGIN: "https://relay.example.com", APPS_DOMAIN: "apps.example.com" };
    const slug = `own-${crypto.randomUUID().slice(0, 8)}`;
    for (const [key, code] of [["externalHosts", "external_host_invalid"], ["embeds", "embed_invalid"]] as const) {
      for (const origin of [`https://${slug}.apps.example.com`, "https://*.apps.example.com"]) {
        const res = await callWith(prod, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: manifestWith(undefined, { [key]: [origin] }), slug } });
        const e = await json<{ error: { code: string; docs_url: string; details: { path: string } } }>(res, 400);
        expect(e.error).toMatchObject({ code, docs_url: `https://relay.example.com/docs/errors#${code}`, details: { path: `x-service-manifest.${key}[0]` } });
      }
    }
    // A wildcard over the apps domain covers any server-chosen slug too.
    const res = await callWith(prod, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: manifestWith(undefined, { externalHosts: ["https://*.apps.example.com"] }) } });
    expect(res.status).toBe(400);
    expect((await res.json<{ error: { code: string } }>()).error.code).toBe("external_host_invalid");
    expect(await ownerCounts(o.human.humanId)).toEqual({ apps: 0, versions: 0 });
    // Another app's origin is fine.
    const ok = await callWith(prod, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: manifestWith(undefined, { externalHosts: ["https://other.apps.example.com"] }), slug } });
    const created = await json<Created>(ok, 201);
    expect(created.url).toBe(`https://${slug}.apps.example.com/`);
  });
});

describe("create: the per-account app cap", () => {
  it("MAX_APPS_PER_ACCOUNT reached → 409 account_quota_exceeded; deleted apps do not count", async () => {
    const o = await owner();
    const capped = (body: Record<string, unknown> = {}) =>
      callWith({ MAX_APPS_PER_ACCOUNT: "2" }, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, ...body } });
    const first = await json<Created>(await capped(), 201);
    await json(await capped(), 201);
    await unchanged(o, null, async () => {
      const e = await expectError(await capped(), 409, "account_quota_exceeded");
      expect(e.details).toEqual({ limit: 2, resource: "apps" });
      await expectError(await capped({ slug: `cap-${crypto.randomUUID().slice(0, 8)}` }), 409, "account_quota_exceeded");
    });
    // Another agent of the same human shares the cap.
    const sibling = await claimedAgent(o.human);
    await expectError(await callWith({ MAX_APPS_PER_ACCOUNT: "2" }, "/v1/apps", { key: sibling.api_key, json: { html: "<p>x</p>", manifest: MANIFEST } }), 409, "account_quota_exceeded");
    await json(await call(`/v1/apps/${first.app_id}`, { key: o.key, method: "DELETE" }), 200);
    await json(await capped(), 201);
  });

  it("concurrent creates cannot pass the cap together", async () => {
    const o = await owner();
    const responses = await Promise.all(Array.from({ length: 5 }, () =>
      callWith({ MAX_APPS_PER_ACCOUNT: "2" }, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST } })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409, 409]);
    for (const r of responses) {
      if (r.status === 409) expect((await expectError(r, 409, "account_quota_exceeded")).details).toEqual({ limit: 2, resource: "apps" });
      else await r.arrayBuffer();
    }
    expect(await ownerCounts(o.human.humanId)).toEqual({ apps: 2, versions: 2 });
  });
});
