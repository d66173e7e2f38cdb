// Text the relay could not keep is refused everywhere it enters, and nothing is written:
// an unpaired UTF-16 surrogate (no UTF-8 encoder can write it) or a NUL character, in a
// JSON body's values or keys at any depth, in a path segment or a query string, or in an
// inline attachment upload. fast-check puts the bad character at random places in
// otherwise valid row bodies; the store's row count must not move.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, claimedAgent, expectError, json, signIn } from "../helpers";

const manifest = {
  "x-service-manifest": {
    app: { name: "Unsafe text" },
    collections: { notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] } },
  },
};

async function setup() {
  const key = (await claimedAgent(await signIn())).api_key;
  const app = await json<{ app_id: string; slug: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
  const rows = `/v1/apps/${app.app_id}/collections/notes`;
  const total = async () => (await json<{ rows: unknown[] }>(await call(`${rows}?limit=1000`, { key }), 200)).rows.length;
  return { key, app, rows, total };
}

const BAD = ["\u0000", "\ud800", "\udfff", "a\udbffz"];

/** A JSON value with `bad` placed somewhere in it (a value or a key, at some depth). */
function withBad(bad: string): fc.Arbitrary<{ data: unknown }> {
  const plain = fc.string({ maxLength: 12 }).filter((text) => !text.includes("\u0000"));
  const leaf = fc.oneof(plain, fc.integer(), fc.boolean(), fc.constant(null));
  const planted = fc.oneof(
    plain.map((text) => ({ value: `${text}${bad}` })),
    plain.map((text) => ({ key: `${text}${bad}` })),
  );
  return fc.tuple(fc.array(plain, { maxLength: 4 }), fc.dictionary(plain, leaf, { maxKeys: 4 }), planted).map(([path, siblings, plant]) => {
    let inner: unknown = "key" in plant ? { ...siblings, [plant.key]: "x" } : { ...siblings, bad: plant.value };
    for (const segment of path) inner = { [`n${segment}`]: inner };
    return { data: inner };
  });
}

describe("text the relay could not keep", { timeout: 60_000 }, () => {
  it("is refused in every place of a row body, values and keys, and nothing is written", async () => {
    const t = await setup();
    await json(await call(t.rows, { key: t.key, json: { data: { title: "kept" } } }), 201);
    await fc.assert(fc.asyncProperty(fc.constantFrom(...BAD).chain(withBad), async (body) => {
      const res = await call(t.rows, { key: t.key, json: body });
      const envelope = await expectError(res, 400, "invalid_request");
      expect(envelope.details?.field).toMatch(/^(data|body)/);
    }), { numRuns: 40 });
    expect(await t.total()).toBe(1);
  });

  it("is refused in updates, batches, the row key and the app's name, with the path named", async () => {
    const t = await setup();
    const row = await json<{ row: { key: string; version: number } }>(await call(t.rows, { key: t.key, json: { data: { title: "one" } } }), 201);
    const update = await expectError(await call(`${t.rows}/${row.row.key}`, { key: t.key, method: "PATCH", json: { data: { title: "x\ud800" } } }), 400, "invalid_request");
    expect(update.details?.field).toBe("data.title");
    await expectError(await call(`${t.rows}/batch`, { key: t.key, json: { rows: [{ data: { title: "fine" } }, { data: { title: "\u0000" } }] } }), 400, "invalid_request");
    await expectError(await call(t.rows, { key: t.key, json: { key: "k\u0000", data: { title: "x" } } }), 400, "invalid_request");
    await expectError(await call("/v1/apps", { key: t.key, json: { html: "<p>x</p>", manifest: { "x-service-manifest": { app: { name: "N\u0000" }, collections: {} } } } }), 400, "invalid_request");
    expect(await t.total()).toBe(1);
    const kept = await json<{ row: { data: { title: string } } }>(await call(`${t.rows}/${row.row.key}`, { key: t.key }), 200);
    expect(kept.row.data.title).toBe("one");
  });

  it("is refused in path segments and query strings: an escaped NUL, or percent-escapes that are not UTF-8", async () => {
    const t = await setup();
    for (const path of [`${t.rows}/a%00b`, `${t.rows}/%ED%A0%80`, `${t.rows}/%FF`, `/v1/apps/${t.app.app_id}%00/collections/notes`]) {
      const envelope = await expectError(await call(path, { key: t.key }), 400, "invalid_request");
      expect(envelope.details?.field).toBe("path");
    }
    for (const query of ["?limit=1%00", "?since=%ED%B0%80", "?x%00=1"]) {
      const envelope = await expectError(await call(`${t.rows}${query}`, { key: t.key }), 400, "invalid_request");
      expect(envelope.details?.field).toBe("query");
    }
    // Ordinary escapes still pass: a space and a non-ASCII letter.
    await expectError(await call(`${t.rows}/no%20such%C3%A9`, { key: t.key }), 404, "row_not_found");
  });

  it("is refused in an inline attachment's filename, and JSON nested far too deep is a 400, not a crash", async () => {
    const t = await setup();
    const upload = await expectError(await call("/v1/attachments", { key: t.key, json: { filename: "a\u0000.txt", mime: "text/plain", content_base64: btoa("hello") } }), 400, "invalid_request");
    expect(upload.details?.field).toBe("filename");
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const res = await call(t.rows, { key: t.key, body: `{"data":${deep}}`, contentType: "application/json" });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await t.total()).toBe(0);
  });
});
