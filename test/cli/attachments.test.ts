// The `service attachment` verbs as a real process against the real test relay: upload
// (agent scope, app scope by slug, declared type checked by the relay), show, list with a
// cursor, download to a file (byte for byte what the relay keeps: the picture re-encoded
// without metadata, whose size and sha256 the AttachmentRef carries) and to stdout, token
// mint/list/revoke with a once URL that works once, delete; the relay's refusals passed
// through and the local argv errors, which never reach the relay.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimedCliAgent, cleanupTempHomes, failed, fakeIp, ok, relayUrl, tempDir, writeTempFile, type CliAgent } from "./helpers.ts";

type Ref = { attachment_id: string; scope: string; mime: string; size: number; sha256: string; filename: string | null; app_id: string | null; status: string };
type Minted = { token_id: string; token: string; url: string; once: boolean; expires_at: string };

/** 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");

/** The bytes are the 1×1 PNG the AttachmentRef describes (size and sha256 of the stored, re-encoded picture). */
function expectStoredPicture(bytes: Buffer, ref: Ref): void {
  expect(bytes.subarray(0, 8).equals(PNG.subarray(0, 8))).toBe(true);
  expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1, 1]);
  expect({ size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }).toEqual({ size: ref.size, sha256: ref.sha256 });
}

async function deployApp(agent: CliAgent): Promise<{ app_id: string; slug: string }> {
  const res = await fetch(`${relayUrl()}/v1/apps`, {
    method: "POST", body: JSON.stringify({ html: "<p>files</p>", manifest: { "x-service-manifest": { app: { name: "Files" }, collections: {} } } }),
    headers: { "content-type": "application/json", "cf-connecting-ip": fakeIp(), authorization: `Bearer ${agent.key}` },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { app_id: string; slug: string };
}

afterAll(() => {
  cleanupTempHomes();
});

describe("service attachment", () => {
  let me: CliAgent;
  let pngPath: string;
  beforeAll(async () => {
    me = await claimedCliAgent("cli-attachment-test");
    pngPath = path.join(tempDir(), "dot.png");
    writeFileSync(pngPath, PNG);
  });

  it("upload, show, list, download (file and stdout), delete", async () => {
    const ref = ok(await me.cli(["attachment", "upload", "--file", pngPath])).json<Ref>();
    expect(ref).toMatchObject({ scope: "agent", mime: "image/png", filename: "dot.png", status: "ready" });
    expect(ok(await me.cli(["attachment", "show", ref.attachment_id])).json<Ref>()).toMatchObject({ attachment_id: ref.attachment_id, mime: "image/png" });

    const notes = writeTempFile("notes.txt", "plain notes\n");
    const text = ok(await me.cli(["attachment", "upload", "--file", notes, "--filename", "renamed.txt"])).json<Ref>();
    expect(text).toMatchObject({ mime: "text/plain", filename: "renamed.txt" });

    const first = ok(await me.cli(["attachment", "list", "--limit", "1"])).json<{ items: Ref[]; next_cursor: string | null }>();
    expect(first.items.map((item) => item.attachment_id)).toEqual([text.attachment_id]);
    const second = ok(await me.cli(["attachment", "list", "--limit", "1", "--cursor", first.next_cursor!])).json<{ items: Ref[] }>();
    expect(second.items.map((item) => item.attachment_id)).toEqual([ref.attachment_id]);

    const out = path.join(tempDir(), "copy.png");
    expect(ok(await me.cli(["attachment", "download", ref.attachment_id, "--out", out])).json()).toEqual({ attachment_id: ref.attachment_id, written: out, bytes: ref.size });
    expectStoredPicture(readFileSync(out), ref);
    expect(ok(await me.cli(["attachment", "download", text.attachment_id])).stdout).toBe("plain notes\n");

    expect(ok(await me.cli(["attachment", "delete", ref.attachment_id])).json()).toEqual({ attachment_id: ref.attachment_id, deleted: true });
    failed(await me.cli(["attachment", "show", ref.attachment_id]), "attachment_not_found");
    expect(ok(await me.cli(["attachment", "delete", ref.attachment_id])).json()).toEqual({ attachment_id: ref.attachment_id, deleted: true });
  });

  it("app scope by slug, and the relay's refusals", async () => {
    const app = await deployApp(me);
    const ref = ok(await me.cli(["attachment", "upload", "--file", pngPath, "--scope", "app", "--app-id", app.slug])).json<Ref>();
    expect(ref).toMatchObject({ scope: "app", app_id: app.app_id });
    failed(await me.cli(["attachment", "upload", "--file", pngPath, "--mime", "image/jpeg"]), "mime_mismatch");
    failed(await me.cli(["attachment", "upload", "--file", writeTempFile("page.html", "<script>x</script>"), "--mime", "text/html"]), "mime_disallowed");
    failed(await me.cli(["attachment", "upload", "--file", pngPath, "--scope", "app", "--app-id", "no-such-app-here"]), "app_not_found");
  });

  it("token mint, list, revoke; a once URL works once", async () => {
    const ref = ok(await me.cli(["attachment", "upload", "--file", pngPath])).json<Ref>();
    const once = ok(await me.cli(["attachment", "token", "mint", ref.attachment_id, "--once"])).json<Minted>();
    expect(once.once).toBe(true);
    const first = await fetch(once.url);
    expect(first.status).toBe(200);
    expectStoredPicture(Buffer.from(await first.arrayBuffer()), ref);
    const again = await fetch(once.url);
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("attachment_token_invalid");

    const brief = ok(await me.cli(["attachment", "token", "mint", ref.attachment_id, "--ttl", "600"])).json<Minted>();
    expect(Math.abs(Date.parse(brief.expires_at) - Date.now() - 600_000)).toBeLessThan(60_000);
    const listed = ok(await me.cli(["attachment", "token", "list", ref.attachment_id])).json<{ attachment_id: string; items: Array<{ token_id: string; use_count: number; once: boolean }> }>();
    expect(listed.items.find((item) => item.token_id === once.token_id)).toMatchObject({ use_count: 1, once: true });
    expect(ok(await me.cli(["attachment", "token", "revoke", ref.attachment_id, brief.token_id])).json()).toEqual({ token_id: brief.token_id, revoked: true });
    expect((await fetch(brief.url)).status).toBe(401);
    failed(await me.cli(["attachment", "token", "revoke", ref.attachment_id, "atk_nothing"]), "attachment_token_not_found");
  });

  it("argv errors never reach the relay", async () => {
    const offline = { env: { SERVICE_URL: "http://127.0.0.1:9" } };
    failed(await me.cli(["attachment", "upload"], offline), "invalid_args");
    failed(await me.cli(["attachment", "upload", "--file", "/no/such/file"], offline), "invalid_args");
    failed(await me.cli(["attachment", "upload", "--file", pngPath, "--scope", "app"], offline), "invalid_args");
    failed(await me.cli(["attachment", "upload", "--file", pngPath, "--scope", "team"], offline), "invalid_args");
    failed(await me.cli(["attachment", "upload", "--file", pngPath, "--app-id", "x"], offline), "invalid_args");
    failed(await me.cli(["attachment", "show", "not-an-id"], offline), "invalid_args");
    failed(await me.cli(["attachment", "list", "--limit", "0"], offline), "invalid_args");
    failed(await me.cli(["attachment", "token", "burn", "att_aaaaaaaaaaaa"], offline), "invalid_args");
    failed(await me.cli(["attachment", "token", "revoke", "att_aaaaaaaaaaaa"], offline), "invalid_args");
    failed(await me.cli(["attachment", "token", "list", "att_aaaaaaaaaaaa", "--once"], offline), "invalid_args");
    failed(await me.cli(["attachment", "token", "mint", "att_aaaaaaaaaaaa", "--ttl", "soon"], offline), "invalid_args");
  });
});
