// App export and import (issue 15 item 5): GET /v1/apps/:id/export streams one tar archive
// and POST /v1/apps/import creates a new app from it. The round trip keeps every row (key,
// data, version, stamps), asset and attachment byte-identical (attachment references point
// at the new copies), carries timezone, visibility and retention overrides, and leaves out
// members' addresses, grant tokens, share tokens and keys. A truncated, tampered, oversize
// or malformed archive is refused before anything exists; a failure midway purges the
// half-made app. Another owner's app is app_not_found.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, count, expectError, json } from "../helpers";
import { b64, deploy, owner, ownerCounts, PDF, PNG, SCHEMA_URI, uniqueText, versionRecord, type Owner } from "./fixtures";
import { readTar, tarEnd, tarHeader, tarPadding } from "../../../src/apps/archive/tar";
import { sumsText } from "../../../src/apps/archive/format";
import { sweepImportStaging } from "../../../src/apps/archive/staging";

const MANIFEST = {
  $schema: SCHEMA_URI,
  $defs: {
    Note: {
      type: "object",
      properties: {
        text: { type: "string", maxLength: 500 },
        file: { type: "string", format: "service-attachment-id" },
        files: { type: "array", items: { type: "string", format: "service-attachment-id" } },
      },
      required: ["text"],
      additionalProperties: false,
    },
    Tag: { type: "object", properties: { name: { type: "string", maxLength: 40 } }, required: ["name"], additionalProperties: false },
  },
  "x-service-manifest": {
    app: { name: "Export me" },
    roles: { guest: { label: "Guest" } },
    collections: {
      notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner", "member"], write: ["owner", "member"], delete: ["owner"] },
      tags: { schema: { $ref: "#/$defs/Tag" }, read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["name"] },
    },
  },
};

type Row = { key: string; data: Record<string, unknown>; version: number; creator: unknown; editor: unknown; created_at: string; updated_at: string };

async function rowsOf(key: string, appId: string, collection: string): Promise<Row[]> {
  const page = await json<{ rows: Row[] }>(await call(`/v1/apps/${appId}/collections/${collection}?limit=100`, { key }), 200);
  return page.rows.sort((a, b) => a.key.localeCompare(b.key));
}

async function attachmentBytes(id: string): Promise<Uint8Array> {
  const object = await env.BLOBS.get(`attachments/${id}`);
  expect(object, `bytes of ${id}`).not.toBeNull();
  return new Uint8Array(await object!.arrayBuffer());
}

async function upload(key: string, bytes: Uint8Array, filename: string, extra: Record<string, unknown> = {}): Promise<string> {
  const ref = await json<{ attachment_id: string }>(await call("/v1/attachments", { key, json: { content_base64: b64(bytes), filename, ...extra } }), 201);
  return ref.attachment_id;
}

async function exported(key: string, appId: string): Promise<Uint8Array> {
  const res = await call(`/v1/apps/${appId}/export`, { key });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/x-tar");
  return new Uint8Array(await res.arrayBuffer());
}

function importing(key: string, archive: Uint8Array): Promise<Response> {
  return call("/v1/apps/import", { key, method: "POST", body: archive, contentType: "application/x-tar" });
}

async function entriesOf(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  const entries = new Map<string, Uint8Array>();
  for await (const { name, bytes } of readTar(new Blob([archive]).stream(), Number.MAX_SAFE_INTEGER, () => Number.MAX_SAFE_INTEGER)) entries.set(name, bytes);
  return entries;
}

/** A tar of these entries with a fresh SHA256SUMS: an archive that is consistent but says what the test wants. */
async function rebuilt(entries: Map<string, Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const sums: { name: string; sha256: string }[] = [];
  const add = (name: string, bytes: Uint8Array) => parts.push(tarHeader(name, bytes.byteLength, 0), bytes, tarPadding(bytes.byteLength));
  for (const [name, bytes] of entries) {
    if (name === "SHA256SUMS") continue;
    add(name, bytes);
    sums.push({ name, sha256: await sha256(bytes) });
  }
  add("SHA256SUMS", new TextEncoder().encode(sumsText(sums)));
  parts.push(tarEnd());
  return new Uint8Array(await new Blob(parts).arrayBuffer());
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function stagingLeft(): Promise<number> {
  return (await env.BLOBS.list({ prefix: "imports/" })).objects.length;
}

/** Runs a refused import and checks nothing of it is left: no app, version, attachment or staged entry. */
async function refusedLeavingNothing(o: Owner, refuse: () => Promise<unknown>): Promise<void> {
  const before = { ...(await ownerCounts(o.human.humanId)), attachments: await count("attachments", "account_id = ?1", o.human.humanId) };
  await refuse();
  const after = { ...(await ownerCounts(o.human.humanId)), attachments: await count("attachments", "account_id = ?1", o.human.humanId) };
  expect(after).toEqual(before);
  expect(await stagingLeft()).toBe(0);
}

/** An app with rows in two collections (one starter row, one updated row, one deleted), assets, attachments, a member, a grant link, a timezone and a retention override. */
async function richApp(o: Owner) {
  const logo = PNG;
  const info = uniqueText("asset");
  const created = await deploy(o.key, {
    manifest: MANIFEST, html: "<h1>export me</h1>", visibility: "link",
    assets: [{ path: "img/logo.png", content_base64: b64(logo) }, { path: "data/info.txt", content_base64: b64(info) }],
    input_data: { tags: [{ key: "starter", data: { name: "seeded" } }] },
  });
  const appId = created.app_id;
  const pdf = await upload(o.key, PDF, "report.pdf", { scope: "app", app_id: appId });
  const text = await upload(o.key, uniqueText("attachment"), "notes.txt");
  const rows = `/v1/apps/${appId}/collections`;
  await json(await call(`${rows}/notes`, { key: o.key, json: { key: "n1", data: { text: "first note", file: pdf } } }), 201);
  await json(await call(`${rows}/notes`, { key: o.key, json: { key: "n2", data: { text: "second", files: [text, pdf] } } }), 201);
  await json(await call(`${rows}/notes/n2`, { key: o.key, method: "PATCH", json: { data: { text: "second, edited", files: [text, pdf] } } }), 200);
  await json(await call(`${rows}/notes`, { key: o.key, json: { key: "gone", data: { text: "deleted before export" } } }), 201);
  expect((await call(`${rows}/notes/gone`, { key: o.key, method: "DELETE" })).status).toBeLessThan(300);
  await json(await call(`${rows}/tags`, { key: o.key, json: { data: { name: "urgent" } } }), 201);
  await json(await call(`${rows}/notes/retention`, { key: o.key, method: "PATCH", json: { maxRows: 500 } }), 200);
  await json(await call(`/v1/apps/${appId}`, { key: o.key, method: "PATCH", json: { timezone: "Europe/Paris" } }), 200);
  const memberEmail = `member-${crypto.randomUUID()}@example.com`;
  const added = await call(`/v1/apps/${appId}/members`, { key: o.key, json: { email: memberEmail } });
  expect(added.status).toBeLessThan(300);
  await added.arrayBuffer();
  const grant = await json<{ grant_url: string }>(await call(`/v1/apps/${appId}/grants`, { key: o.key, json: { role: "guest" } }), 201);
  return { appId, created, logo, info, pdf, text, memberEmail, grantToken: grant.grant_url.split("#g=")[1]! };
}

describe("app export and import", { timeout: 60_000 }, () => {
  it("round trip: every row, asset and attachment identical in a new app; settings carried; secrets absent", async () => {
    const o = await owner();
    const source = await richApp(o);
    const archive = await exported(o.key, source.appId);

    // The archive: every entry listed in SHA256SUMS with its real sha256.
    const entries = await entriesOf(archive);
    const names = [...entries.keys()];
    expect(names.slice(0, 3)).toEqual(["export.json", "manifest.json", "document.html"]);
    expect(names[names.length - 1]).toBe("SHA256SUMS");
    const sums = new TextDecoder().decode(entries.get("SHA256SUMS")!).trim().split("\n");
    expect(sums).toHaveLength(entries.size - 1);
    for (const line of sums) {
      const [digest, name] = line.split("  ");
      expect(await sha256(entries.get(name!)!), name).toBe(digest);
    }

    // Nothing that gives access is in it.
    const text = new TextDecoder("latin1").decode(archive);
    for (const secret of [source.memberEmail, source.grantToken, source.created.share_url!.split("#k=")[1]!, o.key, o.human.email, o.human.session]) {
      expect(text.includes(secret), `archive holds ${secret.slice(0, 12)}…`).toBe(false);
    }
    expect(text).not.toContain("deleted before export");

    const answer = await json<{ app_id: string; slug: string; visibility: string; share_url?: string; imported: { from_app_id: string; rows: number; attachments: number; assets: number } }>(
      await importing(o.key, archive), 201);
    expect(answer.app_id).not.toBe(source.appId);
    expect(answer.slug).not.toBe(source.created.slug);
    expect(answer.visibility).toBe("link");
    expect(answer.share_url).toBeDefined();
    expect(answer.imported).toEqual({ from_app_id: source.appId, rows: 4, attachments: 2, assets: 2 });
    expect(await stagingLeft()).toBe(0);

    // Rows: keys, versions and stamps as they were; data identical once attachment ids map to the copies.
    const oldNotes = await rowsOf(o.key, source.appId, "notes");
    const newNotes = await rowsOf(o.key, answer.app_id, "notes");
    const newIds = new Map([[source.pdf, newNotes.find((r) => r.key === "n1")!.data.file as string]]);
    newIds.set(source.text, (newNotes.find((r) => r.key === "n2")!.data.files as string[])[0]!);
    expect(newIds.get(source.pdf)).not.toBe(source.pdf);
    const remapped = (row: Row) => JSON.parse(JSON.stringify(row).replace(/att_[a-z0-9]+/g, (id) => newIds.get(id) ?? id)) as Row;
    expect(newNotes).toEqual(oldNotes.map(remapped));
    expect(newNotes.map((r) => [r.key, r.version])).toEqual([["n1", 1], ["n2", 2]]);
    expect(await rowsOf(o.key, answer.app_id, "tags")).toEqual(await rowsOf(o.key, source.appId, "tags"));
    expect((await rowsOf(o.key, answer.app_id, "tags")).find((r) => r.key === "starter")!.creator).toEqual({ kind: "system", id: "seed" });

    // Attachments: byte-identical copies scoped to the new app.
    for (const [oldId, newId] of newIds) {
      expect(await attachmentBytes(newId)).toEqual(await attachmentBytes(oldId));
      const row = await env.DB.prepare("SELECT scope, app_id FROM attachments WHERE id = ?1").bind(newId).first<{ scope: string; app_id: string }>();
      expect(row).toEqual({ scope: "app", app_id: answer.app_id });
    }

    // Document and assets: the same bytes (content-addressed, so the same sha256 is the same bytes).
    const [oldVersion, newVersion] = [await versionRecord(source.appId, 1), await versionRecord(answer.app_id, 1)];
    expect(newVersion.documentSha256).toBe(oldVersion.documentSha256);
    expect(newVersion.manifest).toEqual(oldVersion.manifest);
    expect(newVersion.assets.map(({ path, sha256: digest, size, mime }) => ({ path, digest, size, mime })))
      .toEqual(oldVersion.assets.map(({ path, sha256: digest, size, mime }) => ({ path, digest, size, mime })));
    const asset = await env.BLOBS.get(`asset/${newVersion.assets.find((a) => a.path === "data/info.txt")!.sha256}`);
    expect(new Uint8Array(await asset!.arrayBuffer())).toEqual(source.info);

    // Settings carried; people and links not.
    const detail = await json<{ timezone: string | null }>(await call(`/v1/apps/${answer.app_id}`, { key: o.key }), 200);
    expect(detail.timezone).toBe("Europe/Paris");
    const retention = await json<{ override: { maxRows: number | null } }>(await call(`/v1/apps/${answer.app_id}/collections/notes/retention`, { key: o.key }), 200);
    expect(retention.override.maxRows).toBe(500);
    const members = await json<{ members: { role: string }[] }>(await call(`/v1/apps/${answer.app_id}/members`, { key: o.key }), 200);
    expect(members.members.map((m) => m.role)).toEqual(["owner"]);
    expect(await count("grant_links", "app_id = ?1", answer.app_id)).toBe(0);
  });

  it("another owner's app is app_not_found", async () => {
    const o = await owner();
    const stranger = await owner();
    const created = await deploy(o.key, { manifest: MANIFEST });
    await expectError(await call(`/v1/apps/${created.app_id}/export`, { key: stranger.key }), 404, "app_not_found");
  });

  it("a truncated, tampered, oversize or malformed archive is refused before anything is created", async () => {
    const o = await owner();
    const source = await richApp(o);
    const archive = await exported(o.key, source.appId);

    await refusedLeavingNothing(o, async () => {
      await expectError(await importing(o.key, archive.slice(0, archive.byteLength - 3000)), 400, "import_archive_invalid");
      await expectError(await importing(o.key, archive.slice(0, 700)), 400, "import_archive_invalid");
    });

    await refusedLeavingNothing(o, async () => {
      const tampered = archive.slice();
      const at = new TextDecoder("latin1").decode(tampered).indexOf("first note");
      tampered[at] = "F".charCodeAt(0);
      const e = await expectError(await importing(o.key, tampered), 422, "import_checksum_mismatch");
      expect(String(e.details?.entry)).toMatch(/^rows\//);
    });

    await refusedLeavingNothing(o, async () => {
      const huge = new Uint8Array(await new Blob([tarHeader("document.html", 50_000_000, 0), new Uint8Array(4096)]).arrayBuffer());
      const e = await expectError(await importing(o.key, huge), 413, "import_archive_too_large");
      expect(e.details).toMatchObject({ entry: "document.html", size: 50_000_000 });
    });

    await refusedLeavingNothing(o, async () => {
      await expectError(await importing(o.key, new TextEncoder().encode("not a tar archive at all")), 400, "import_archive_invalid");
      const entries = await entriesOf(archive);
      entries.set("../escape", new Uint8Array(1));
      await expectError(await importing(o.key, await rebuilt(entries)), 400, "import_archive_invalid");
      const unlisted = await entriesOf(archive);
      unlisted.delete("attachments.json");
      await expectError(await importing(o.key, await rebuilt(unlisted)), 400, "import_archive_invalid");
    });
  });

  it("a failure midway (a row the schema refuses) purges the half-made app and its attachments", async () => {
    const o = await owner();
    const source = await richApp(o);
    const entries = await entriesOf(await exported(o.key, source.appId));
    const [rowsName, rowsBytes] = [...entries].find(([name]) => name.startsWith("rows/"))!;
    const lines = new TextDecoder().decode(rowsBytes).trim().split("\n").map((line) => JSON.parse(line) as { key: string; data: Record<string, unknown> });
    lines.find((row) => row.key === "n2")!.data.text = 42;
    entries.set(rowsName, new TextEncoder().encode(lines.map((row) => `${JSON.stringify(row)}\n`).join("")));
    await refusedLeavingNothing(o, async () => {
      await expectError(await importing(o.key, await rebuilt(entries)), 422, "row_schema_violation");
    });
  });

  it("the cron removes entries an import that died midway left staged, once they are a day old", async () => {
    const key = `imports/imp_${crypto.randomUUID().replace(/-/g, "")}/rows/000001.ndjson`;
    await env.BLOBS.put(key, "{}\n");
    await sweepImportStaging(env.BLOBS, Date.now());
    expect(await env.BLOBS.head(key)).not.toBeNull();
    expect(await sweepImportStaging(env.BLOBS, Date.now() + 2 * 86_400_000)).toBeGreaterThanOrEqual(1);
    expect(await env.BLOBS.head(key)).toBeNull();
  });

  it("the guide is served at /docs/export-import", async () => {
    const res = await call("/docs/export-import", { headers: { accept: "text/markdown" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("# Exporting and importing an app");
  });
});
