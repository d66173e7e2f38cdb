// Receiving at an inbound hook URL, through the real Worker, D1 and AppStore: every outcome
// and sender-visible status of spec B "Inbound hook outcomes" (200 accepted / duplicate /
// failed, 404, 415, 413, 401, 429, 503, 409), the map and default row, dedupe by body path
// and by header (a failure releases its value), if_match on upsert rules, both handshake
// forms, wake, and rows stamped `hook` reaching the feed like any write.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import { deployIngest, pathOf, post } from "./fixtures";

describe("inbound hook receive", { timeout: 60_000 }, () => {
  it("a mapped delivery is accepted, stamped hook, journaled and in the feed; the default row keeps the whole body", async () => {
    const t = await deployIngest([
      { name: "github", collection: "issues", map: { title: "issue.title", state: "issue.state", slug: "issue.missing" } },
      { name: "raw", collection: "issues" },
    ]);
    const hook = await t.hook("github");
    expect(hook.url).toMatch(/^http:\/\/localhost:8787\/v1\/ingest\/ih_[a-z0-9]+\/[0-9a-f]{48}$/);
    expect(await json(await post(hook.url, { issue: { title: "Broken", state: null } }), 200)).toEqual({ ok: true });
    const rows = await t.rows();
    expect(rows).toHaveLength(1);
    expect(rows[0].data).toEqual({ title: "Broken", state: null });
    expect(rows[0].author).toEqual({ kind: "hook", id: "github" });
    const [entry] = await t.deliveries();
    expect(entry).toMatchObject({ hook: "github", status: "accepted", source: "live", rowKey: rows[0].key, error: null, payload: { issue: { title: "Broken", state: null } } });
    const feed = await json<{ entries: { op: string; author: { kind: string } }[] }>(await call(`/v1/apps/${t.appId}/feed?since=0`, { key: t.key }), 200);
    expect(feed.entries.at(-1)).toMatchObject({ op: "create", author: { kind: "hook", id: "github" } });

    await json(await post((await t.hook("raw")).url, { anything: [1, 2] }), 200);
    const raw = (await t.rows()).find((row) => row.data.hook === "raw")!;
    expect(raw.data).toMatchObject({ hook: "raw", payload: { anything: [1, 2] } });
    expect(Date.parse(raw.data.receivedAt as string)).toBeGreaterThan(0);
  });

  it("dedupe by body path: a second delivery is dropped_duplicate; a failed one releases its value", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "id" }]);
    const { url } = await t.hook("h");
    await json(await post(url, { id: 7, title: "first" }), 200);
    await json(await post(url, { id: 7, title: "again" }), 200);
    expect((await t.rows()).map((row) => row.data.title)).toEqual(["first"]);
    // A body the schema refuses fails, answered 200, and frees its value for the corrected retry.
    await json(await post(url, { id: 8, title: 42 }), 200);
    await json(await post(url, { id: 8, title: "fixed" }), 200);
    expect((await t.rows()).map((row) => row.data.title).sort()).toEqual(["first", "fixed"]);
    const statuses = (await t.deliveries()).map((d) => d.status);
    expect(statuses).toEqual(["accepted", "failed", "dropped_duplicate", "accepted"]);
    const failed = (await t.deliveries("?status=failed"))[0];
    expect(failed.error?.code).toBe("row_schema_violation");
    expect((await t.hook("h")).deliveries).toEqual({ accepted: 2, failed: 1, dropped_duplicate: 1 });
  });

  it("dedupe by header, looked up case-insensitively", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "header:x-github-delivery" }]);
    const { url } = await t.hook("h");
    await json(await post(url, { title: "a" }, { headers: { "X-GitHub-Delivery": "abc" } }), 200);
    await json(await post(url, { title: "b" }, { headers: { "x-github-delivery": "abc" } }), 200);
    await json(await post(url, { title: "c" }, { headers: { "x-github-delivery": "def" } }), 200);
    expect((await t.rows()).map((row) => row.data.title).sort()).toEqual(["a", "c"]);
    expect((await t.deliveries("?status=dropped_duplicate"))[0].dedupeKey).toBe("header:x-github-delivery");
  });

  it("upsert with if_match: no row yet ignores it, a match bumps the version, a mismatch is 409, a malformed one fails", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", mode: "upsert", upsertOn: "slug", map: { slug: "slug", title: "title" } }]);
    const { url } = await t.hook("h");
    await json(await post(url, { slug: "s1", title: "one", if_match: 9 }), 200);
    expect((await t.rows())[0]).toMatchObject({ version: 1, data: { slug: "s1", title: "one" } });
    await json(await post(url, { slug: "s1", title: "two", if_match: 1 }), 200);
    expect((await t.rows())[0]).toMatchObject({ version: 2, data: { title: "two" } });
    const mismatch = await expectError(await post(url, { slug: "s1", title: "three", if_match: 1 }), 409, "conflict");
    expect(mismatch.details).toMatchObject({ current_version: 2 });
    await json(await post(url, { slug: "s1", title: "four", if_match: "x" }), 200);
    await json(await post(url, { slug: "s1", title: "five" }), 200);
    const rows = await t.rows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ version: 3, data: { title: "five" } });
    const failures = (await t.deliveries("?status=failed")).map((d) => d.error?.code);
    expect(failures.sort()).toEqual(["conflict", "invalid_request"]);
  });

  it("an upsert cannot update an append-only row or change an immutable field: journaled failed", async () => {
    const owned = { schema: { $ref: "#/$defs/Issue" }, read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["slug"] };
    const t = await deployIngest([
      { name: "log", collection: "log", mode: "upsert", upsertOn: "slug", map: { slug: "slug", title: "title" } },
      { name: "fixed", collection: "issues", mode: "upsert", upsertOn: "slug", map: { slug: "slug", title: "title", state: "state" } },
    ], { collections: { log: { ...owned, appendOnly: true }, issues: { ...owned, immutable: ["state"] } } });
    const log = (await t.hook("log")).url;
    await json(await post(log, { slug: "a", title: "first" }), 200);
    await json(await post(log, { slug: "a", title: "second" }), 200);
    const fixed = (await t.hook("fixed")).url;
    await json(await post(fixed, { slug: "b", title: "one", state: "open" }), 200);
    await json(await post(fixed, { slug: "b", title: "two", state: "closed" }), 200);
    await json(await post(fixed, { slug: "b", title: "three" }), 200);
    expect((await t.deliveries("?status=failed")).map((d) => d.error?.code).sort()).toEqual(["append_only", "invalid_request"]);
    expect((await t.rows())[0].data).toEqual({ slug: "b", title: "three", state: "open" });
  });

  it("404 for an unknown hook, a wrong secret, a rotated URL and a disabled hook; it comes back with its rule", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "t" } }]);
    const { url } = await t.hook("h");
    const [, , , hookId, secret] = pathOf(url).split("/");
    await expectError(await call(`/v1/ingest/${hookId}/${"0".repeat(48)}`, { method: "POST", json: { t: "x" } }), 404, "ingest_not_found");
    await expectError(await call(`/v1/ingest/ih_nope/${secret}`, { method: "POST", json: { t: "x" } }), 404, "ingest_not_found");
    const rotated = await json<{ hook: { name: string; url: string } }>(await call(`/v1/apps/${t.appId}/ingest-hooks/h/rotate`, { key: t.key, method: "POST" }), 200);
    expect(rotated.hook.name).toBe("h");
    expect(rotated.hook.url).not.toBe(url);
    await expectError(await post(url, { t: "old" }), 404, "ingest_not_found");
    await json(await post(rotated.hook.url, { t: "new" }), 200);

    await t.redeploy([]);
    const disabled = await t.hook("h");
    expect(disabled).toMatchObject({ collection: null, mode: null, wake: null, handshake: null, url: rotated.hook.url });
    expect(disabled.disabledAt).not.toBeNull();
    await expectError(await post(rotated.hook.url, { t: "off" }), 404, "ingest_not_found");
    await t.redeploy([{ name: "h", collection: "issues", map: { title: "t" } }]);
    expect(await t.hook("h")).toMatchObject({ disabledAt: null, collection: "issues", mode: "append", url: rotated.hook.url });
    await json(await post(rotated.hook.url, { t: "back" }), 200);
    expect((await t.rows()).map((row) => row.data.title).sort()).toEqual(["back", "new"]);
  });

  it("415 for a body that is not application/json, 413 past INGEST_MAX_BODY_BYTES; nothing journaled", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues" }]);
    const { url } = await t.hook("h");
    await expectError(await call(pathOf(url), { method: "POST", body: "a=1", contentType: "application/x-www-form-urlencoded" }), 415, "ingest_unsupported_media_type");
    await expectError(await call(pathOf(url), { method: "POST", body: "{}" }), 415, "ingest_unsupported_media_type");
    await expectError(await callWith({ INGEST_MAX_BODY_BYTES: "100" }, pathOf(url), { method: "POST", json: { pad: "x".repeat(200) } }), 413, "ingest_payload_too_large");
    expect(await t.deliveries()).toEqual([]);
    // Valid JSON media type, body not JSON: journaled failed, answered 200.
    await json(await post(url, "{not json"), 200);
    expect((await t.deliveries())[0]).toMatchObject({ status: "failed", error: { code: "invalid_request" }, payload: "{not json" });
  });

  it("429: the per-IP limiter and the app's hourly cap", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "t" } }]);
    const { url } = await t.hook("h");
    const ip = `10.99.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const limited = { RATE_LIMIT_INGEST: "2" };
    for (let i = 0; i < 2; i++) await json(await callWith(limited, pathOf(url), { method: "POST", json: { t: `ip${i}` }, ip }), 200);
    const refused = await callWith(limited, pathOf(url), { method: "POST", json: { t: "ip3" }, ip });
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectError(refused, 429, "rate_limited");

    const capped = { INGEST_APP_HOURLY_CAP: "3" };
    const sent = (await t.deliveries()).length;
    for (let i = sent; i < 3; i++) await json(await callWith(capped, pathOf(url), { method: "POST", json: { t: `cap${i}` } }), 200);
    await expectError(await callWith(capped, pathOf(url), { method: "POST", json: { t: "over" } }), 429, "rate_limited");
    expect(await t.deliveries()).toHaveLength(3);
  });

  it("the hourly cap counts every live delivery journaled this hour, accepted, duplicate or failed, and no replay", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "id" }]);
    const { url } = await t.hook("h");
    const capped = { INGEST_APP_HOURLY_CAP: "3" };
    const send = (body: unknown) => callWith(capped, pathOf(url), typeof body === "string"
      ? { method: "POST", body, contentType: "application/json" } : { method: "POST", json: body });
    await json(await send({ id: 1, title: "accepted" }), 200);
    await json(await send({ id: 1, title: "duplicate" }), 200);
    const replay = await call(`/v1/apps/${t.appId}/ingest/deliveries/${(await t.deliveries("?status=accepted"))[0].id}/replay`, { key: t.key, method: "POST" });
    expect((await json<{ delivery: { source: string } }>(replay, 200)).delivery.source).toBe("replay");
    await json(await send("{not json"), 200);
    expect((await t.deliveries()).map((entry) => `${entry.source}:${entry.status}`).sort()).toEqual([
      "live:accepted", "live:dropped_duplicate", "live:failed", "replay:accepted",
    ]);
    await expectError(await send({ id: 3, title: "over" }), 429, "rate_limited");
    expect(await t.deliveries()).toHaveLength(4);
    // The owner's usage counts the same live deliveries, written with their journal entries.
    const usage = await json<{ totals: Record<string, number> }>(await call(`/v1/apps/${t.appId}/usage`, { key: t.key }), 200);
    expect(usage.totals.ingest_deliveries).toBe(3);
  });

  it("a live delivery that takes over a backfill's claim left processing counts against the hourly cap", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "id" }]);
    const { url } = await t.hook("h");
    const hookId = pathOf(url).split("/")[3];
    // A backfill that died mid-body: its claim is in the journal, still processing, and counts nothing.
    await env.DB.prepare(
      "INSERT INTO ingest_deliveries (id, app_id, hook_id, hook_name, source, status, dedupe_key, dedupe_value, payload, created_at, claimed_at) VALUES (?1, ?2, ?3, 'h', 'backfill', 'processing', 'id', '1', ?4, ?5, ?6)",
    ).bind("ind_deadbackfillclaim01", t.appId, hookId, JSON.stringify({ id: 1, title: "backfilled" }), new Date().toISOString(), Date.now()).run();
    const capped = { INGEST_APP_HOURLY_CAP: "1" };
    await json(await callWith(capped, pathOf(url), { method: "POST", json: { id: 1, title: "live re-send" } }), 200);
    expect((await t.deliveries()).map((entry) => `${entry.id}:${entry.source}:${entry.status}`)).toEqual(["ind_deadbackfillclaim01:live:accepted"]);
    await expectError(await callWith(capped, pathOf(url), { method: "POST", json: { id: 2, title: "over" } }), 429, "rate_limited");
    expect(await t.rows()).toHaveLength(1);
  });

  it("503 when the app is at its storage quota, journaled failed (retryable)", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "t" } }]);
    const { url } = await t.hook("h");
    await json(await post(url, { t: "one" }), 200);
    // Pretend the app already holds nearly its MAX_STORAGE_BYTES_PER_APP (50 MiB).
    const store = env.APP_STORE.get(env.APP_STORE.idFromName(t.appId));
    await runInDurableObject(store, (_instance, state) => {
      state.storage.sql.exec("UPDATE _svc_rows SET bytes = ? WHERE collection = 'issues'", 52_428_800 - 10);
    });
    const refused = await expectError(await post(url, { t: "two is too many bytes" }), 503, "ingest_write_unavailable");
    expect(refused.retryable).toBe(true);
    expect((await t.deliveries())[0]).toMatchObject({ status: "failed", error: { code: "app_quota_exceeded" } });
    expect(await t.rows()).toHaveLength(1);
  });

  it("handshake echo: GET ?challenge= and a POST body's string challenge are answered, nothing journaled", async () => {
    const t = await deployIngest([{ name: "echo", collection: "issues", handshake: "echo" }, { name: "plain", collection: "issues" }]);
    const echo = pathOf((await t.hook("echo")).url);
    const got = await call(`${echo}?challenge=abc123`);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("abc123");
    const posted = await call(echo, { method: "POST", json: { type: "url_verification", challenge: "xyz" } });
    expect(posted.status).toBe(200);
    expect(await posted.text()).toBe("xyz");
    expect(await t.deliveries()).toEqual([]);
    // A hook without handshake echo answers no GET, and writes a body with a challenge like any other.
    const plain = pathOf((await t.hook("plain")).url);
    await expectError(await call(`${plain}?challenge=abc`), 404, "ingest_not_found");
    await json(await call(plain, { method: "POST", json: { challenge: "c" } }), 200);
    expect(await t.rows()).toHaveLength(1);
  });

  it("wake: a delivery on a wake hook brings a dormant app back; one without wake leaves it dormant", async () => {
    const t = await deployIngest([{ name: "sleepy", collection: "issues" }, { name: "waker", collection: "issues", wake: true }]);
    const dormant = () => env.DB.prepare("UPDATE apps SET status = 'dormant' WHERE id = ?1").bind(t.appId).run();
    const status = async () => (await json<{ status: string }>(await call(`/v1/apps/${t.appId}`, { key: t.key }), 200)).status;
    await dormant();
    await json(await post((await t.hook("sleepy")).url, { a: 1 }), 200);
    expect(await status()).toBe("dormant");
    await json(await post((await t.hook("waker")).url, { a: 2 }), 200);
    expect(await status()).toBe("active");
    expect(await t.rows()).toHaveLength(2);
  });
});
