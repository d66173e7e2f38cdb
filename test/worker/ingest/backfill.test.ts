// Backfill, the journal and replay (WIRE §2.7; spec A notes 19–21; CONTRACT §6): both body
// forms with per-body outcomes; no brake, no signature and no wake; a re-run after a
// partial backfill writes each body once (dedupe), and a delivery a dead relay left
// `processing` is taken over at once without writing twice (by a backfill or a live
// delivery); the journal lists by hook and status,
// a replay runs the stored body through the current rule bypassing dedupe, and the sweep
// prunes by age and per-app cap.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import { deployIngest, pathOf, post, type DeliveryView } from "./fixtures";
import { pruneIngestJournal } from "../../../src/effects/ingest/journal";

type Result = { total: number; accepted: number; dropped_duplicate: number; failed: number; outcomes: string[] };

describe("inbound hook backfill and journal", { timeout: 60_000 }, () => {
  it("both body forms, per-body outcomes; brakes, signatures and wake do not apply", async () => {
    const t = await deployIngest([{ name: "gh", collection: "issues", map: { title: "title" }, dedupeKey: "id", verify: { scheme: "github" }, wake: true }]);
    await env.DB.prepare("UPDATE apps SET status = 'dormant' WHERE id = ?1").bind(t.appId).run();
    const path = `/v1/apps/${t.appId}/ingest-hooks/gh/backfill`;
    const wrapped = await json<Result>(await callWith({ INGEST_APP_HOURLY_CAP: "1", RATE_LIMIT_INGEST: "1" }, path, {
      key: t.key, json: { bodies: [{ id: 1, title: "a" }, { id: 2, title: 5 }, { id: 1, title: "a again" }, { id: 3, title: "c" }] },
    }), 200);
    expect(wrapped).toEqual({ total: 4, accepted: 2, dropped_duplicate: 1, failed: 1, outcomes: ["accepted", "failed", "dropped_duplicate", "accepted"] });
    const bare = await json<Result>(await call(path, { key: t.key, json: [{ id: 2, title: "b" }, "not an object"] }), 200);
    expect(bare.outcomes).toEqual(["accepted", "accepted"]);
    expect((await t.rows()).map((row) => row.data.title ?? null).sort()).toEqual(["a", "b", "c", null]);
    expect((await json<{ status: string }>(await call(`/v1/apps/${t.appId}`, { key: t.key }), 200)).status).toBe("dormant");
    expect((await t.deliveries("?status=accepted"))[0].source).toBe("backfill");

    await expectError(await callWith({ INGEST_BACKFILL_MAX_BODIES: "2" }, path, { key: t.key, json: [1, 2, 3] }), 400, "invalid_request");
    await expectError(await call(path, { key: t.key, json: { bodies: "x" } }), 400, "invalid_request");
    await expectError(await call(`/v1/apps/${t.appId}/ingest-hooks/none/backfill`, { key: t.key, json: [] }), 404, "ingest_not_found");
    const stranger = await deployIngest([]);
    await expectError(await call(path, { key: stranger.key, json: [] }), 404, "app_not_found");
  });

  it("a backfill re-run after a partial one writes each body once; a stale processing claim is taken over, not written twice", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "n" }]);
    const path = `/v1/apps/${t.appId}/ingest-hooks/h/backfill`;
    const bodies = Array.from({ length: 10 }, (_, n) => ({ n, title: `t${n}` }));
    await json(await call(path, { key: t.key, json: bodies.slice(0, 4) }), 200);
    // A relay that died mid-body: body 4 written at its delivery's key, its journal entry still processing.
    await json(await call(path, { key: t.key, json: [bodies[4]] }), 200);
    const claimed = (await t.deliveries()).find((d) => (d.payload as { n: number }).n === 4)!;
    await env.DB.prepare("UPDATE ingest_deliveries SET status = 'processing', claimed_at = ?2 WHERE id = ?1").bind(claimed.id, Date.now() - 5 * 60_000).run();
    const again = await json<Result>(await call(path, { key: t.key, json: bodies }), 200);
    expect(again.outcomes).toEqual([...Array(4).fill("dropped_duplicate"), "accepted", ...Array(5).fill("accepted")]);
    const rows = await t.rows();
    expect(rows.map((row) => row.data.title).sort()).toEqual(bodies.map((b) => b.title).sort());
    expect(rows.find((row) => row.data.title === "t4")!.key).toBe(claimed.id);
  });

  it("a delivery re-sent right after a crash takes over a claim still processing: a body the dead relay never wrote is written, one it wrote is not written twice", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "n" }]);
    const path = `/v1/apps/${t.appId}/ingest-hooks/h/backfill`;
    const hook = await t.hook("h");
    const hookId = pathOf(hook.url).split("/")[3];
    // The dead relay claimed a body a moment ago and died before writing it: a fresh claim, no row.
    const crashedClaim = (claimId: string, body: { n: number; title: string }) => env.DB.prepare(
      "INSERT INTO ingest_deliveries (id, app_id, hook_id, hook_name, source, status, dedupe_key, dedupe_value, payload, created_at, claimed_at) VALUES (?1, ?2, ?3, 'h', 'live', 'processing', 'n', ?4, ?5, ?6, ?7)",
    ).bind(claimId, t.appId, hookId, String(body.n), JSON.stringify(body), new Date().toISOString(), Date.now()).run();
    // The sender's live re-send is written at once, at the claim's id, not answered as a duplicate.
    const unwrittenLive = { n: 2, title: "never written, re-sent live" };
    await crashedClaim("ind_crashedclaim0000002", unwrittenLive);
    await json(await post(hook.url, unwrittenLive), 200);
    expect(await t.deliveries("?status=dropped_duplicate")).toEqual([]);
    expect((await t.rows()).map((row) => [row.key, row.data.title])).toEqual([["ind_crashedclaim0000002", unwrittenLive.title]]);
    // So is the owner's backfill re-send.
    const unwritten = { n: 0, title: "never written" };
    const claimId = "ind_crashedclaim0000000";
    await crashedClaim(claimId, unwritten);
    expect((await json<Result>(await call(path, { key: t.key, json: [unwritten] }), 200)).outcomes).toEqual(["accepted"]);
    expect((await t.rows()).find((row) => row.key === claimId)?.data.title).toBe("never written");

    // The dead relay wrote body 1's row but not its journal entry: the re-send finds the row.
    const written = { n: 1, title: "written" };
    await json(await call(path, { key: t.key, json: [written] }), 200);
    const entry = (await t.deliveries("?status=accepted")).find((d) => (d.payload as { n: number }).n === 1)!;
    await env.DB.prepare("UPDATE ingest_deliveries SET status = 'processing', claimed_at = ?2 WHERE id = ?1").bind(entry.id, Date.now()).run();
    expect((await json<Result>(await call(path, { key: t.key, json: [written, unwritten] }), 200)).outcomes).toEqual(["accepted", "dropped_duplicate"]);
    const rows = await t.rows();
    expect(rows.map((row) => row.key).sort()).toEqual([claimId, entry.id, "ind_crashedclaim0000002"].sort());
    expect(rows.every((row) => row.version === 1)).toBe(true);
    expect((await json<Result>(await call(path, { key: t.key, json: [written] }), 200)).outcomes).toEqual(["dropped_duplicate"]);
  });

  it("a delivery and its duplicate sent together write one row and end one journal entry accepted", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "n" }]);
    const hook = await t.hook("h");
    for (let n = 0; n < 5; n += 1) {
      const body = { n, title: `twice ${n}` };
      const answers = await Promise.all([post(hook.url, body), post(hook.url, body), post(hook.url, body)]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    }
    const rows = await t.rows();
    expect(rows.map((row) => row.data.title).sort()).toEqual([0, 1, 2, 3, 4].map((n) => `twice ${n}`));
    expect(rows.every((row) => row.version === 1)).toBe(true);
    const accepted = await t.deliveries("?status=accepted");
    expect(accepted.map((d) => (d.payload as { n: number }).n).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await t.deliveries("?status=processing")).toEqual([]);
  });

  it("an upsert body re-sent after a crash that left its row written and its claim processing is not applied a second time", async () => {
    const t = await deployIngest([{ name: "u", collection: "issues", mode: "upsert", upsertOn: "slug", map: { slug: "slug", title: "title" }, dedupeKey: "id" }]);
    const path = `/v1/apps/${t.appId}/ingest-hooks/u/backfill`;
    const body = { id: 7, slug: "seven", title: "seven" };
    expect((await json<Result>(await call(path, { key: t.key, json: [body] }), 200)).outcomes).toEqual(["accepted"]);
    const entry = (await t.deliveries("?hook=u"))[0];
    // The dead relay wrote the row (created at the delivery's id) but not the journal's end.
    await env.DB.prepare("UPDATE ingest_deliveries SET status = 'processing', claimed_at = ?2 WHERE id = ?1").bind(entry.id, Date.now()).run();
    expect((await json<Result>(await call(path, { key: t.key, json: [body] }), 200)).outcomes).toEqual(["accepted"]);
    expect((await t.rows()).map((row) => [row.key, row.version])).toEqual([[entry.id, 1]]);
    const feed = await json<{ entries: { op: string; row_key: string }[] }>(await call(`/v1/apps/${t.appId}/feed?since=0&limit=100`, { key: t.key }), 200);
    expect(feed.entries.map((e) => [e.op, e.row_key])).toEqual([["create", entry.id]]);
  });

  it("the journal filters by hook and status; replay bypasses dedupe and uses the current rule; a disabled hook cannot replay", async () => {
    const t = await deployIngest([{ name: "a", collection: "issues", map: { title: "title" }, dedupeKey: "id" }, { name: "b", collection: "issues" }]);
    await json(await post((await t.hook("a")).url, { id: 1, title: "first" }), 200);
    await json(await post((await t.hook("b")).url, { x: 1 }), 200);
    const onlyA = await t.deliveries("?hook=a");
    expect(onlyA.map((d) => d.hook)).toEqual(["a"]);
    expect(await t.deliveries("?status=failed")).toEqual([]);
    await expectError(await call(`/v1/apps/${t.appId}/ingest/deliveries?status=nope`, { key: t.key }), 400, "invalid_request");

    await t.redeploy([{ name: "a", collection: "issues", map: { title: "id" }, dedupeKey: "id" }, { name: "b", collection: "issues" }]);
    const replayed = await json<{ delivery: DeliveryView }>(await call(`/v1/apps/${t.appId}/ingest/deliveries/${onlyA[0].id}/replay`, { key: t.key, method: "POST" }), 200);
    expect(replayed.delivery).toMatchObject({ hook: "a", source: "replay", replayOfId: onlyA[0].id, status: "failed", error: { code: "row_schema_violation" } });
    await t.redeploy([{ name: "a", collection: "issues", map: { slug: "title" }, dedupeKey: "id" }, { name: "b", collection: "issues" }]);
    const ok = await json<{ delivery: DeliveryView }>(await call(`/v1/apps/${t.appId}/ingest/deliveries/${onlyA[0].id}/replay`, { key: t.key, method: "POST" }), 200);
    expect(ok.delivery.status).toBe("accepted");
    expect((await t.rows()).some((row) => row.data.slug === "first")).toBe(true);

    await t.redeploy([{ name: "b", collection: "issues" }]);
    await expectError(await call(`/v1/apps/${t.appId}/ingest/deliveries/${onlyA[0].id}/replay`, { key: t.key, method: "POST" }), 409, "conflict");
    await expectError(await call(`/v1/apps/${t.appId}/ingest/deliveries/ind_nope/replay`, { key: t.key, method: "POST" }), 404, "not_found");
  });

  it("the sweep prunes entries past the retention window, then the oldest past the per-app cap; processing entries stay", async () => {
    const t = await deployIngest([{ name: "h", collection: "issues", map: { title: "t" } }]);
    const { url } = await t.hook("h");
    for (let i = 0; i < 4; i++) await json(await post(url, { t: `n${i}` }), 200);
    const all = await t.deliveries();
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE ingest_deliveries SET created_at = ?2 WHERE id = ?1").bind(all[3].id, old).run();
    await env.DB.prepare("UPDATE ingest_deliveries SET created_at = ?2, status = 'processing' WHERE id = ?1").bind(all[2].id, old).run();
    await pruneIngestJournal(env);
    expect((await t.deliveries()).map((d) => d.id)).toEqual([all[0].id, all[1].id, all[2].id]);
    await pruneIngestJournal({ ...env, INGEST_DELIVERY_MAX_PER_APP: "1" } as Env);
    expect((await t.deliveries()).map((d) => d.id)).toEqual([all[0].id, all[2].id]);
  });
});
