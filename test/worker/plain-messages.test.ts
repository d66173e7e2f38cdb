// Refusals of malformed bodies and query strings read like the rest of the catalogue: the
// field's own name, then what is wrong with it ("name is required", "visibility must be one
// of private, link, public"), never the validation library's wording. One translator
// (src/http/plain-issues.ts) writes them for every route, the batch rows' own results and
// the app origin's doors included.
import { describe, expect, it } from "vitest";
import { call, expectError, json, type Envelope } from "./helpers";
import { MANIFEST, deploy, owner } from "./apps/fixtures";

/** Phrases of zod's own messages; none may reach a caller. */
const LIBRARY_WORDING = [/expected nonoptional/i, /invalid input/i, /too big/i, /too small/i, /received undefined/i, /invalid option/i, /unrecognized key/i, /expected one of/i];

function messagesOf(e: Envelope): string[] {
  const issues = (e.details?.issues ?? []) as Array<{ message: string }>;
  return [e.message, ...issues.map((i) => i.message)];
}

function expectPlain(messages: string[]): void {
  for (const message of messages) for (const phrase of LIBRARY_WORDING) expect(message).not.toMatch(phrase);
}

describe("invalid_request messages in plain words", () => {
  it("a missing required field: <field> is required", async () => {
    const e = await expectError(await call("/v1/device/code", { method: "POST", json: {} }), 400, "invalid_request");
    expect(e.message).toBe("name is required");
    expect(e.details).toEqual({ field: "name", issues: [{ field: "name", message: "name is required" }] });
  });

  it("an over-long string: <field> must be at most N characters", async () => {
    const e = await expectError(await call("/v1/device/code", { method: "POST", json: { name: "n".repeat(65) } }), 400, "invalid_request");
    expect(e.message).toBe("name must be at most 64 characters");
    expect(e.details?.field).toBe("name");
    const o = await owner();
    const slug = await expectError(await call("/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, slug: "s".repeat(64) } }), 400, "invalid_request");
    expect(slug.message).toBe("slug must be at most 63 characters");
  });

  it("a value outside an enum: <field> must be one of …", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const e = await expectError(await call(`/v1/apps/${created.app_id}`, { method: "PATCH", key: o.key, json: { visibility: "secret" } }), 400, "invalid_request");
    expect(e.message).toBe("visibility must be one of private, link, public");
    expect(e.details).toEqual({ field: "visibility", issues: [{ field: "visibility", message: "visibility must be one of private, link, public" }] });
  });

  it("a wrong type names what was sent; an unknown field and the body's own rule name the body", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const type = await expectError(await call("/v1/apps", { key: o.key, json: { html: 5, manifest: MANIFEST } }), 400, "invalid_request");
    expect(type.message).toBe("html must be a string, not a number");
    const none = await expectError(await call("/v1/apps", { key: o.key, json: { html: null, manifest: MANIFEST } }), 400, "invalid_request");
    expect(none.message).toBe("html must be a string, not null");
    const unknown = await expectError(await call("/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, colour: "red" } }), 400, "invalid_request");
    expect(unknown.message).toBe('the body takes no field "colour"');
    expect(unknown.details?.field).toBe("colour");
    const empty = await expectError(await call(`/v1/apps/${created.app_id}`, { method: "PATCH", key: o.key, json: {} }), 400, "invalid_request");
    expect(empty.message).toBe("the body must name visibility or timezone");
    expect(empty.details?.field).toBe("body");
  });

  it("several problems: the first in the message, every one in details.issues", async () => {
    const o = await owner();
    const e = await expectError(await call("/v1/apps", { key: o.key, json: { manifest: MANIFEST, visibility: "secret" } }), 400, "invalid_request");
    expect(e.message).toBe("html is required (and 1 more problem in details.issues)");
    expect(e.details).toEqual({
      field: "html",
      issues: [{ field: "html", message: "html is required" }, { field: "visibility", message: "visibility must be one of private, link, public" }],
    });
  });

  it("query strings: <parameter> must be …", async () => {
    const o = await owner();
    const low = await expectError(await call("/v1/apps?limit=0", { key: o.key }), 400, "invalid_request");
    expect(low.message).toBe("limit must be at least 1");
    const word = await expectError(await call("/v1/apps?limit=ten", { key: o.key }), 400, "invalid_request");
    expect(word.message).toBe("limit must be a number");
    const half = await expectError(await call("/v1/apps?limit=1.5", { key: o.key }), 400, "invalid_request");
    expect(half.message).toBe("limit must be a whole number");
    const created = await deploy(o.key);
    const flag = await expectError(await call(`/v1/apps/${created.app_id}?include_deleted=maybe`, { key: o.key }), 400, "invalid_request");
    expect(flag.message).toBe("include_deleted must be one of true, false");
  });

  it("a row's key over 128 characters, alone and as one row of a batch (its own result)", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const base = `/v1/apps/${created.app_id}/collections/notes`;
    const single = await expectError(await call(base, { key: o.key, json: { key: "k".repeat(129), data: { text: "a" } } }), 400, "invalid_request");
    expect(single.message).toBe("key must be at most 128 characters");
    const batch = await json<{ results: Array<{ ok: boolean; error?: { message: string; details: Record<string, unknown> } }> }>(
      await call(`${base}/batch`, { key: o.key, json: { rows: [{ data: { text: "a" } }, { key: "k".repeat(129), data: { text: "b" } }, { text: "c" }] } }), 200);
    expect(batch.results[0].ok).toBe(true);
    expect(batch.results[1].error?.message).toBe("rows.1.key must be at most 128 characters");
    expect(batch.results[1].error?.details.field).toBe("rows.1.key");
    expect(batch.results[2].error?.message).toBe('rows.2.data is required (and 1 more problem in details.issues)');
    expect(batch.results[2].error?.details.issues).toEqual([
      { field: "rows.2.data", message: "rows.2.data is required" },
      { field: "rows.2.text", message: 'rows.2 takes no field "text"' },
    ]);
  });

  it("no message of any refusal here carries the library's wording", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const refusals: Array<[string, Parameters<typeof call>[1]]> = [
      ["/v1/device/code", { method: "POST", json: {} }],
      ["/v1/device/code", { method: "POST", json: { name: 7 } }],
      ["/v1/device/code", { method: "POST", json: { name: "" } }],
      ["/v1/device/token", { method: "POST", json: { device_code: "" } }],
      ["/v1/register", { method: "POST", json: { name: ["x"] } }],
      ["/v1/apps", { key: o.key, json: {} }],
      ["/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, assets: [{ path: "a.txt" }] } }],
      ["/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, assets: [{ path: 3, content_base64: "" }] } }],
      ["/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, dry_run: "yes", input_data: [] } }],
      [`/v1/apps/${created.app_id}`, { method: "PATCH", key: o.key, json: { timezone: "z".repeat(65) } }],
      [`/v1/apps/${created.app_id}/versions`, { key: o.key, json: { html: "<p>x</p>", force: 1 } }],
      [`/v1/apps/${created.app_id}/grants`, { key: o.key, json: { role: "guest", pin: { where: [{ field: "1x", op: "in", value: 3 }] } } }],
      [`/v1/apps/${created.app_id}/grants`, { key: o.key, json: { role: "guest", pin: { row_key: "a b", where: [] } } }],
      [`/v1/apps/${created.app_id}/feed?wait=99&collection=,`, { key: o.key }],
      ["/v1/apps?status=sideways&limit=-1", { key: o.key }],
    ];
    for (const [path, opts] of refusals) {
      const e = await expectError(await call(path, opts), 400, "invalid_request");
      expect(messagesOf(e).every((m) => m.length > 0), path).toBe(true);
      expectPlain(messagesOf(e));
    }
  });
});
