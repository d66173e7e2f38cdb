// Presign → PUT → confirm on the relay's own upload URL, and fetch from a URL (WIRE §2.9).
// A confirm re-checks the stored bytes (size, sha256, sniffed type); each failure keeps the
// attachment pending and changes nothing else; an upload never confirmed is swept; a fetch
// goes through the outbound guard (loopback is allowed only because tests run in
// development mode).
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, count, dispatch, expectError, json } from "../helpers";
import { sweepPendingUploads, UPLOAD_URL_SECONDS } from "../../../src/blobs/presign";
import { holdings, PNG, sha256, stored, storedForm, uploader, utf8, type Ref } from "./helpers";

type Presigned = { attachment_id: string; upload_url: string; expires_at: string };

async function presign(key: string, bytes: Uint8Array, extra: Record<string, unknown> = {}): Promise<Presigned> {
  return json<Presigned>(await call("/v1/attachments/presign", { key, json: { mime: "image/png", size: bytes.length, sha256: await sha256(bytes), ...extra } }), 201);
}

function put(url: string, bytes: Uint8Array): Promise<Response> {
  return dispatch(new Request(url, { method: "PUT", body: bytes, headers: { "content-type": "image/png", "x-ms-blob-type": "BlockBlob", "cf-connecting-ip": "10.9.9.9" } }));
}

function status(id: string): Promise<string | null> {
  return env.DB.prepare("SELECT status FROM attachments WHERE id = ?1").bind(id).first<string>("status");
}

describe("presigned uploads", () => {
  it("presign, PUT without a key, confirm: ready with the sniffed type", async () => {
    const u = await uploader();
    const reserved = await presign(u.key, PNG, { filename: "dot.png" });
    expect(reserved.upload_url).toMatch(new RegExp(`^http://localhost:8787/v1/attachments/${reserved.attachment_id}/upload\\?secret=[0-9a-f]+$`));
    expect(Date.parse(reserved.expires_at) - Date.now()).toBeLessThanOrEqual(UPLOAD_URL_SECONDS * 1000);
    expect(await status(reserved.attachment_id)).toBe("pending");
    await expectError(await call(`/v1/attachments/${reserved.attachment_id}`, { key: u.key }), 404, "attachment_not_found");
    expect((await json<Ref>(await call(`/v1/attachments/${reserved.attachment_id}/metadata`, { key: u.key }), 200)).status).toBe("pending");
    await expectError(await call(`/v1/attachments/${reserved.attachment_id}/confirm`, { key: u.key, method: "POST" }), 409, "attachment_not_uploaded");
    expect((await put(reserved.upload_url, PNG)).status).toBe(200);
    const ref = await json<Ref>(await call(`/v1/attachments/${reserved.attachment_id}/confirm`, { key: u.key, method: "POST" }), 200);
    // Confirm checked the PUT's bytes against the presign; what is kept is their re-encoding without metadata.
    const clean = await storedForm(PNG);
    expect(ref).toMatchObject({ attachment_id: reserved.attachment_id, status: "ready", mime: "image/png", size: clean.length, sha256: await sha256(clean), width: 1, height: 1, filename: "dot.png" });
    expect(new Uint8Array(await (await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key })).arrayBuffer())).toEqual(clean);
    // Confirming again answers the same; the URL is spent.
    expect((await json<Ref>(await call(`/v1/attachments/${reserved.attachment_id}/confirm`, { key: u.key, method: "POST" }), 200)).status).toBe("ready");
    await expectError(await put(reserved.upload_url, PNG), 401, "upload_url_invalid");
  });

  it("refuses a wrong sha256, a lying type, somebody else's confirm, a bad or oversized PUT, and bad presigns", async () => {
    const u = await uploader();
    const stranger = await uploader();
    const wrongHash = await presign(u.key, PNG, { sha256: "0".repeat(64) });
    expect((await put(wrongHash.upload_url, PNG)).status).toBe(200);
    await expectError(await call(`/v1/attachments/${wrongHash.attachment_id}/confirm`, { key: stranger.key, method: "POST" }), 404, "attachment_not_found");
    const mismatch = await expectError(await call(`/v1/attachments/${wrongHash.attachment_id}/confirm`, { key: u.key, method: "POST" }), 422, "attachment_checksum_mismatch");
    expect(mismatch.details).toMatchObject({ expected: { sha256: "0".repeat(64) }, received: { sha256: await sha256(PNG) } });
    expect(await status(wrongHash.attachment_id)).toBe("pending");

    const text = utf8("plain words, not a png");
    const lying = await presign(u.key, text);
    expect((await put(lying.upload_url, text)).status).toBe(200);
    await expectError(await call(`/v1/attachments/${lying.attachment_id}/confirm`, { key: u.key, method: "POST" }), 415, "mime_mismatch");
    expect(await status(lying.attachment_id)).toBe("pending");

    const small = await presign(u.key, PNG);
    await expectError(await put(small.upload_url.replace(/secret=[0-9a-f]+/, "secret=feed"), PNG), 401, "upload_url_invalid");
    await expectError(await put(small.upload_url, new Uint8Array([...PNG, ...PNG])), 413, "attachment_size_exceeded");
    expect(await stored(small.attachment_id)).toBe(false);

    const before = await holdings(u.agent.agent_id);
    await expectError(await call("/v1/attachments/presign", { key: u.key, json: { mime: "text/html", size: 10, sha256: "a".repeat(64) } }), 415, "mime_disallowed");
    await expectError(await call("/v1/attachments/presign", { key: u.key, json: { mime: "image/png", size: 6_000_000, sha256: "a".repeat(64) } }), 413, "attachment_size_exceeded");
    await expectError(await call("/v1/attachments/presign", { key: u.key, json: { mime: "image/png", size: 10, sha256: "xyz" } }), 400, "invalid_request");
    await expectError(await call("/v1/attachments/presign", { key: u.key, json: { mime: "image/png", size: 0, sha256: "a".repeat(64) } }), 400, "invalid_request");
    expect(await holdings(u.agent.agent_id)).toBe(before);
  });

  it("sweeps an upload never confirmed, bytes and row, and leaves ready ones", async () => {
    const u = await uploader();
    const abandoned = await presign(u.key, PNG);
    expect((await put(abandoned.upload_url, PNG)).status).toBe(200);
    const kept = await presign(u.key, PNG);
    await put(kept.upload_url, PNG);
    await json(await call(`/v1/attachments/${kept.attachment_id}/confirm`, { key: u.key, method: "POST" }), 200);
    await sweepPendingUploads(env, Date.now() + 30 * 60_000);
    expect(await status(abandoned.attachment_id)).toBe("pending");
    await sweepPendingUploads(env, Date.now() + 2 * 3600_000);
    expect(await count("attachments", "id = ?1", abandoned.attachment_id)).toBe(0);
    expect(await stored(abandoned.attachment_id)).toBe(false);
    expect(await status(kept.attachment_id)).toBe("ready");
    expect(await stored(kept.attachment_id)).toBe(true);
  });
});

describe("POST /v1/attachments/fetch", () => {
  it("downloads through the outbound guard and runs the pipeline", async () => {
    const u = await uploader();
    const receiver = inject("webhookReceiver");
    const ref = await json<Ref>(await call("/v1/attachments/fetch", { key: u.key, json: { source_url: `${receiver}/hook/att-fetch-${u.agent.agent_id}` } }), 201);
    expect(ref).toMatchObject({ mime: "text/plain", size: "received".length, sha256: await sha256(utf8("received")) });
    const asJson = await json<Ref>(await call("/v1/attachments/fetch", { key: u.key, json: { source_url: `${receiver}/log/att-fetch-${u.agent.agent_id}`, mime: "application/json" } }), 201);
    expect(asJson.mime).toBe("application/json");
  });

  it("refuses private targets, plain http, redirects and failures, storing nothing", async () => {
    const u = await uploader();
    const receiver = inject("webhookReceiver");
    const inbox = `att-fail-${u.agent.agent_id}`;
    const before = await holdings(u.agent.agent_id);
    for (const source_url of ["https://10.0.0.1/x.png", "http://example.com/x.png", "https://169.254.169.254/latest", "https://user:pw@example.com/x", "not a url"]) {
      await expectError(await call("/v1/attachments/fetch", { key: u.key, json: { source_url } }), 422, "attachment_fetch_failed");
    }
    await fetch(`${receiver}/control/${inbox}`, { method: "POST", body: JSON.stringify({ status: 302, location: "https://example.com/" }) });
    const redirected = await expectError(await call("/v1/attachments/fetch", { key: u.key, json: { source_url: `${receiver}/hook/${inbox}` } }), 422, "attachment_fetch_failed");
    expect(redirected.details).toMatchObject({ status: 302 });
    await fetch(`${receiver}/control/${inbox}`, { method: "POST", body: JSON.stringify({ status: 503 }) });
    await expectError(await call("/v1/attachments/fetch", { key: u.key, json: { source_url: `${receiver}/hook/${inbox}` } }), 422, "attachment_fetch_failed");
    expect(await holdings(u.agent.agent_id)).toBe(before);
  });
});
