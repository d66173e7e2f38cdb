// `service apps export <app> --out <file>` and `service apps import <file>` as real
// processes against the test relay: the archive written to disk imports as a second app
// with the same rows (keys, data, versions, stamps), asset and attachment bytes; a changed
// archive is refused with import_checksum_mismatch and creates nothing; a missing file is
// invalid_args; another owner's app is app_not_found.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, failed, ok, relayUrl, tempDir, type CliAgent } from "./helpers.ts";

afterAll(() => {
  cleanupTempHomes();
});

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    Todo: {
      type: "object",
      properties: { title: { type: "string", maxLength: 200 }, done: { type: "boolean" }, file: { type: "string", format: "service-attachment-id" } },
      required: ["title"],
      additionalProperties: false,
    },
  },
  "x-service-manifest": {
    app: { name: "Todos to move" },
    collections: { todos: { schema: { $ref: "#/$defs/Todo" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

type Row = { key: string; data: Record<string, unknown>; version: number; creator: unknown; editor: unknown; created_at: string; updated_at: string };

async function api(me: CliAgent, method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${relayUrl()}${route}`, {
    method, headers: { authorization: `Bearer ${me.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, `${method} ${route}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as Record<string, unknown>;
}

async function todos(me: CliAgent, appId: string): Promise<Row[]> {
  return ((await api(me, "GET", `/v1/apps/${appId}/collections/todos?limit=100`)).rows as Row[]).sort((a, b) => a.key.localeCompare(b.key));
}

async function bytesOf(me: CliAgent, route: string): Promise<Buffer> {
  const res = await fetch(`${relayUrl()}${route}`, { headers: { authorization: `Bearer ${me.key}` } });
  expect(res.status, route).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function appCount(me: CliAgent): Promise<number> {
  return ((await api(me, "GET", "/v1/apps?status=all&limit=200")).items as unknown[]).length;
}

describe("service apps export / import", () => {
  let me: CliAgent;
  let appId = "";
  let attachmentId = "";
  const attachmentText = `attached ${Math.random()}\n`;

  beforeAll(async () => {
    me = await claimedCliAgent("cli-export-test");
    const dir = appPackage(MANIFEST, "todos");
    writeFileSync(path.join(dir, "assets", "notes.txt"), `asset ${Math.random()}\n`);
    appId = ok(await me.cli(["deploy", dir])).json<{ app_id: string }>().app_id;
    attachmentId = String((await api(me, "POST", "/v1/attachments", {
      content_base64: Buffer.from(attachmentText).toString("base64"), filename: "todo.txt", scope: "app", app_id: appId,
    })).attachment_id);
    await api(me, "POST", `/v1/apps/${appId}/collections/todos`, { key: "buy-milk", data: { title: "Buy milk" } });
    await api(me, "POST", `/v1/apps/${appId}/collections/todos`, { key: "call-mum", data: { title: "Call mum", file: attachmentId } });
    await api(me, "PATCH", `/v1/apps/${appId}/collections/todos/buy-milk`, { data: { title: "Buy milk", done: true } });
    await api(me, "POST", `/v1/apps/${appId}/collections/todos`, { key: "water-plants", data: { title: "Water the plants" } });
  });

  it("exports to a file and imports it as a second app with the same todos, assets and attachment", async () => {
    const out = path.join(tempDir(), "todos.tar");
    const written = ok(await me.cli(["apps", "export", appId, "--out", out], { timeoutMs: 120_000 })).json<{ app_id: string; written: string; bytes: number }>();
    expect(written).toEqual({ app_id: appId, written: out, bytes: readFileSync(out).byteLength });
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(readFileSync(out).subarray(257, 262).toString("latin1")).toBe("ustar");

    const imported = ok(await me.cli(["apps", "import", out], { timeoutMs: 120_000 }))
      .json<{ app_id: string; slug: string; url: string; imported: { rows: number; attachments: number; assets: number } }>();
    expect(imported.app_id).not.toBe(appId);
    expect(imported.imported).toMatchObject({ rows: 3, attachments: 1, assets: 1 });

    const [before, after] = [await todos(me, appId), await todos(me, imported.app_id)];
    const newAttachment = String(after.find((row) => row.key === "call-mum")!.data.file);
    expect(newAttachment).not.toBe(attachmentId);
    expect(after).toEqual(before.map((row) => (row.key === "call-mum" ? { ...row, data: { ...row.data, file: newAttachment } } : row)));
    expect(await bytesOf(me, `/v1/attachments/${newAttachment}`)).toEqual(Buffer.from(attachmentText));

    const [oldDoc, newDoc] = [await api(me, "GET", `/v1/apps/${appId}/document`), await api(me, "GET", `/v1/apps/${imported.app_id}/document`)];
    expect(newDoc.html).toBe(oldDoc.html);
  });

  it("refuses a changed archive with import_checksum_mismatch and creates nothing", async () => {
    const out = path.join(tempDir(), "todos.tar");
    ok(await me.cli(["apps", "export", appId, "--out", out], { timeoutMs: 120_000 }));
    const archive = readFileSync(out);
    const at = archive.indexOf("Water the plants");
    archive[at] = "w".charCodeAt(0);
    const changed = path.join(tempDir(), "changed.tar");
    writeFileSync(changed, archive);
    const apps = await appCount(me);
    failed(await me.cli(["apps", "import", changed], { timeoutMs: 120_000 }), "import_checksum_mismatch");
    expect(await appCount(me)).toBe(apps);
  });

  it("a missing file is invalid_args; another owner's app is app_not_found", async () => {
    failed(await me.cli(["apps", "import", path.join(tempDir(), "nope.tar")]), "invalid_args");
    const stranger = await claimedCliAgent("cli-export-stranger");
    failed(await stranger.cli(["apps", "export", appId, "--out", path.join(tempDir(), "x.tar")]), "app_not_found");
  });
});
