// Capability tokens (WIRE §2.9, spec B): /b/<token> opens the bytes with no key on the API
// origin and on an app origin; TTL only shortens the scope's default; a once token works
// once, then attachment_token_invalid; revoke is idempotent and stops the token; the list
// shows use counts and revoked tokens; a deleted attachment's tokens stop.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { appCall, deploy } from "../serve/helpers";
import { clockPast } from "../../support/wait";
import { PNG, storedForm, uploaded, uploader } from "./helpers";

type Minted = { token_id: string; token: string; token_prefix: string; url: string; expires_at: string; once: boolean };
type Listed = { attachment_id: string; items: Array<{ token_id: string; token_prefix: string; expires_at: string; once: boolean; created_at: string; last_used_at: string | null; use_count: number; revoked_at: string | null }> };

const HOUR = 3600_000;

async function mint(key: string, id: string, body?: Record<string, unknown>): Promise<Minted> {
  return json<Minted>(await call(`/v1/attachments/${id}/tokens`, { key, method: "POST", ...(body ? { json: body } : {}) }), 201);
}

function open(url: string): Promise<Response> {
  return call(new URL(url).pathname + new URL(url).search);
}

describe("attachment capability tokens", () => {
  it("mints with the scope's default lifetime, only shortened; /b/<token> needs no key; uses are counted", async () => {
    const u = await uploader();
    const ref = await uploaded(u.key);
    const token = await mint(u.key, ref.attachment_id);
    expect(token.url).toBe(`http://localhost:8787/b/${token.token}`);
    expect(token.token_prefix).toBe(token.token.slice(0, 10));
    expect(Math.abs(Date.parse(token.expires_at) - Date.now() - 24 * HOUR)).toBeLessThan(60_000);
    const longer = await mint(u.key, ref.attachment_id, { ttl_seconds: 90 * 86_400 });
    expect(Math.abs(Date.parse(longer.expires_at) - Date.now() - 24 * HOUR)).toBeLessThan(60_000);
    const shorter = await mint(u.key, ref.attachment_id, { ttl_seconds: 600 });
    expect(Math.abs(Date.parse(shorter.expires_at) - Date.now() - 600_000)).toBeLessThan(60_000);

    for (let i = 0; i < 2; i += 1) {
      const res = await open(token.url);
      expect(res.status).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(await storedForm(PNG));
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const listed = await json<Listed>(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: u.key }), 200);
    expect(listed.attachment_id).toBe(ref.attachment_id);
    const entry = listed.items.find((item) => item.token_id === token.token_id)!;
    expect(entry).toMatchObject({ use_count: 2, once: false, revoked_at: null, token_prefix: token.token_prefix });
    expect(entry.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(token.token);

    const app = await deploy(u.owner);
    const appScoped = await uploaded(u.key, PNG, { scope: "app", app_id: app.app_id });
    const month = await mint(u.key, appScoped.attachment_id);
    expect(Math.abs(Date.parse(month.expires_at) - Date.now() - 30 * 24 * HOUR)).toBeLessThan(60_000);
    // The capability URL works on an app origin too.
    const onApp = await appCall(app.slug, `/b/${month.token}`);
    expect(onApp.status).toBe(200);
    expect(new Uint8Array(await onApp.arrayBuffer())).toEqual(await storedForm(PNG));
  });

  it("a once token works once; revoked, expired, unknown and deleted-attachment tokens are invalid", async () => {
    const u = await uploader();
    const ref = await uploaded(u.key);
    const once = await mint(u.key, ref.attachment_id, { once: true });
    expect(once.once).toBe(true);
    expect((await open(once.url)).status).toBe(200);
    await expectError(await open(once.url), 401, "attachment_token_invalid");

    // Two GETs racing for one once token: exactly one gets the bytes.
    const raced = await mint(u.key, ref.attachment_id, { once: true });
    const statuses = (await Promise.all([open(raced.url), open(raced.url), open(raced.url)])).map((res) => res.status).sort();
    expect(statuses).toEqual([200, 401, 401]);

    const revoked = await mint(u.key, ref.attachment_id);
    expect(await json(await call(`/v1/attachments/${ref.attachment_id}/tokens/${revoked.token_id}`, { key: u.key, method: "DELETE" }), 200)).toEqual({ token_id: revoked.token_id, revoked: true });
    expect(await json(await call(`/v1/attachments/${ref.attachment_id}/tokens/${revoked.token_id}`, { key: u.key, method: "DELETE" }), 200)).toEqual({ token_id: revoked.token_id, revoked: true });
    await expectError(await open(revoked.url), 401, "attachment_token_invalid");
    const listed = await json<Listed>(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: u.key }), 200);
    expect(listed.items.find((item) => item.token_id === revoked.token_id)!.revoked_at).not.toBeNull();
    expect(listed.items.find((item) => item.token_id === once.token_id)!.use_count).toBe(1);

    const brief = await mint(u.key, ref.attachment_id, { ttl_seconds: 1 });
    await clockPast(Date.parse(brief.expires_at));
    await expectError(await open(brief.url), 401, "attachment_token_invalid");
    await expectError(await call("/b/sbt_" + "0".repeat(48)), 401, "attachment_token_invalid");
    await expectError(await call("/b/whatever"), 401, "attachment_token_invalid");

    const live = await mint(u.key, ref.attachment_id);
    await json(await call(`/v1/attachments/${ref.attachment_id}`, { key: u.key, method: "DELETE" }), 200);
    await expectError(await open(live.url), 401, "attachment_token_invalid");
  });

  it("refuses bad mints and other people's tokens", async () => {
    const u = await uploader();
    const stranger = await uploader();
    const ref = await uploaded(u.key);
    const other = await uploaded(u.key);
    const token = await mint(u.key, ref.attachment_id);
    await expectError(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: stranger.key, method: "POST" }), 404, "attachment_not_found");
    await expectError(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: stranger.key }), 404, "attachment_not_found");
    await expectError(await call(`/v1/attachments/${ref.attachment_id}/tokens/${token.token_id}`, { key: stranger.key, method: "DELETE" }), 404, "attachment_not_found");
    await expectError(await call(`/v1/attachments/${other.attachment_id}/tokens/${token.token_id}`, { key: u.key, method: "DELETE" }), 404, "attachment_token_not_found");
    await expectError(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: u.key, json: { ttl_seconds: 0 } }), 400, "invalid_request");
    await expectError(await call(`/v1/attachments/${ref.attachment_id}/tokens`, { key: u.key, json: { once: "yes" } }), 400, "invalid_request");
    expect((await open(token.url)).status).toBe(200);
  });
});
