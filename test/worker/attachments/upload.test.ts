// Uploading attachments through the agent API (WIRE §2.9): inline base64 and multipart,
// sniffed types, sizes and sha256 on the AttachmentRef, agent and app scope, list with a
// cursor, metadata, download with hardened headers, soft delete that frees the bytes.
// Every bad input of the list gets its catalogue code and stores nothing.
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import { deploy } from "../serve/helpers";
import { holdings, inline, multipart, PNG, pngHeader, sha256, stored, storedForm, uploaded, uploader, utf8, zipOf, type Ref } from "./helpers";

describe("POST /v1/attachments", () => {
  it("stores an inline PNG with its sniffed type, size, sha256 and pixel size, and serves it back", async () => {
    const u = await uploader();
    const ref = await uploaded(u.key, PNG, { filename: "dot.png" });
    // What is kept is the PNG re-encoded without metadata (originals.test.ts); size and sha256 are its.
    const clean = await storedForm(PNG);
    expect(ref).toMatchObject({ scope: "agent", mime: "image/png", size: clean.length, sha256: await sha256(clean), width: 1, height: 1, filename: "dot.png", status: "ready", app_id: null, deleted_at: null });
    expect(ref.attachment_id).toMatch(/^att_[a-z0-9]+$/);
    const res = await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(clean);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(res.headers.get("content-disposition")).toBe('inline; filename="dot.png"');
    expect(await json(await call(`/v1/attachments/${ref.attachment_id}/metadata`, { key: u.key }), 200)).toEqual(ref);
    const ranged = await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key, headers: { range: "bytes=0-7" } });
    expect(ranged.status).toBe(206);
    expect((await ranged.arrayBuffer()).byteLength).toBe(8);
  });

  it("takes multipart with a filename and app scope; text downloads as an attachment", async () => {
    const u = await uploader();
    const app = await deploy(u.owner);
    const text = utf8("name,count\nfig,3\n");
    const ref = await json<Ref>(await multipart(u.key, text, { scope: "app", app_id: app.app_id }, "text/csv", "figs.csv"), 201);
    expect(ref).toMatchObject({ scope: "app", app_id: app.app_id, mime: "text/csv", filename: "figs.csv", size: text.length });
    const res = await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key });
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="figs.csv"');
    expect(await res.text()).toBe("name,count\nfig,3\n");
  });

  it("refuses each bad input with its code and stores nothing", async () => {
    const u = await uploader();
    const other = await uploader();
    const otherApp = await deploy(other.owner);
    const before = await holdings(u.agent.agent_id);
    await expectError(await inline(u.key, PNG, { mime: "image/jpeg" }), 415, "mime_mismatch");
    await expectError(await multipart(u.key, PNG, {}, "application/pdf"), 415, "mime_mismatch");
    await expectError(await inline(u.key, utf8("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + "\x00".repeat(60) + "PE\x00\x00")), 415, "mime_disallowed");
    await expectError(await inline(u.key, utf8("<html><script>alert(1)</script></html>"), { mime: "text/html" }), 415, "mime_disallowed");
    await expectError(await inline(u.key, utf8("{not json"), { mime: "application/json" }), 415, "mime_mismatch");
    await expectError(await inline(u.key, utf8("x".repeat(200)), {}, { MAX_BLOB_BYTES: "100" }), 413, "attachment_size_exceeded");
    await expectError(await inline(u.key, zipOf(utf8("tiny"), 2_000_000_000)), 413, "attachment_expansion_exceeded");
    await expectError(await inline(u.key, pngHeader(100_000, 100_000)), 413, "attachment_expansion_exceeded");
    await expectError(await inline(u.key, PNG, { scope: "app", app_id: otherApp.app_id }), 404, "app_not_found");
    await expectError(await inline(u.key, PNG, { scope: "app" }), 400, "invalid_request");
    await expectError(await inline(u.key, PNG, { app_id: otherApp.app_id }), 400, "invalid_request");
    await expectError(await call("/v1/attachments", { key: u.key, json: { content_base64: "not base64!" } }), 400, "invalid_request");
    await expectError(await call("/v1/attachments", { key: u.key, json: { content_base64: "", extra: 1 } }), 400, "invalid_request");
    await expectError(await inline(u.key, new Uint8Array(0)), 400, "invalid_request");
    await expectError(await call("/v1/attachments", { json: { content_base64: "AAAA" } }), 401, "unauthorized");
    // A multipart body cut off before its closing boundary.
    const form = new FormData();
    form.set("file", new File([PNG], "dot.png", { type: "image/png" }));
    const whole = new Uint8Array(await new Response(form).arrayBuffer());
    const type = new Response(form).headers.get("content-type")!;
    await expectError(await call("/v1/attachments", { key: u.key, body: whole.slice(0, whole.length - 30), contentType: type }), 400, "invalid_request");
    expect(await holdings(u.agent.agent_id)).toBe(before);
  });

  it("keeps per-app and per-account quotas", async () => {
    const u = await uploader();
    const app = await deploy(u.owner);
    await uploaded(u.key, utf8("a".repeat(60)), { scope: "app", app_id: app.app_id });
    const before = await holdings(u.agent.agent_id);
    const appQuota = await expectError(await inline(u.key, utf8("b".repeat(60)), { scope: "app", app_id: app.app_id }, { MAX_BLOBS_PER_APP_BYTES: "100" }), 413, "quota_exceeded");
    expect(appQuota.details).toMatchObject({ scope: "app", held: 60, size: 60, limit: 100 });
    await expectError(await inline(u.key, utf8("c".repeat(60)), {}, { MAX_BLOBS_PER_ACCOUNT_BYTES: "100" }), 409, "account_quota_exceeded");
    expect(await holdings(u.agent.agent_id)).toBe(before);
    // Within both caps it goes through.
    await json(await callWith({ MAX_BLOBS_PER_APP_BYTES: "200" }, "/v1/attachments", { key: u.key, json: { content_base64: btoa("d".repeat(60)), scope: "app", app_id: app.app_id } }), 201);
  });

  it("accepts an honest zip", async () => {
    const u = await uploader();
    expect((await uploaded(u.key, zipOf(utf8("hello zip")))).mime).toBe("application/zip");
  });
});

describe("GET /v1/attachments and DELETE", () => {
  it("lists the agent's own, newest first, a page at a time", async () => {
    const u = await uploader();
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) ids.push((await uploaded(u.key, utf8(text))).attachment_id);
    const first = await json<{ items: Ref[]; next_cursor: string | null }>(await call("/v1/attachments?limit=2", { key: u.key }), 200);
    expect(first.items.map((item) => item.attachment_id)).toEqual([ids[2], ids[1]]);
    expect(first.next_cursor).not.toBeNull();
    const second = await json<{ items: Ref[]; next_cursor: string | null }>(await call(`/v1/attachments?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`, { key: u.key }), 200);
    expect(second).toEqual({ items: [expect.objectContaining({ attachment_id: ids[0] })], next_cursor: null });
    await expectError(await call("/v1/attachments?cursor=nonsense", { key: u.key }), 400, "invalid_request");
    await expectError(await call("/v1/attachments?limit=101", { key: u.key }), 400, "invalid_request");
    const stranger = await uploader();
    expect((await json<{ items: Ref[] }>(await call("/v1/attachments", { key: stranger.key }), 200)).items).toEqual([]);
  });

  it("soft-deletes: the bytes go, the id stops working, a second delete is fine, a stranger's delete is not found", async () => {
    const u = await uploader();
    const stranger = await uploader();
    const ref = await uploaded(u.key);
    await expectError(await call(`/v1/attachments/${ref.attachment_id}`, { key: stranger.key, method: "DELETE" }), 404, "attachment_not_found");
    await expectError(await call(`/v1/attachments/${ref.attachment_id}`, { key: stranger.key }), 404, "attachment_not_found");
    expect(await stored(ref.attachment_id)).toBe(true);
    expect(await json(await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key, method: "DELETE" }), 200)).toEqual({ attachment_id: ref.attachment_id, deleted: true });
    expect(await stored(ref.attachment_id)).toBe(false);
    await expectError(await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key }), 404, "attachment_not_found");
    expect(await json(await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key, method: "DELETE" }), 200)).toEqual({ attachment_id: ref.attachment_id, deleted: true });
    expect((await json<{ items: Ref[] }>(await call("/v1/attachments", { key: u.key }), 200)).items).toEqual([]);
    await expectError(await call("/v1/attachments/att_nothinghere00", { key: u.key, method: "DELETE" }), 404, "attachment_not_found");
  });
});
