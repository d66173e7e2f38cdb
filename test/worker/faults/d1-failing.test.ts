// Fault test (issue 16): D1 failing at the data layer. A few write routes (create an app,
// create a row, add a member, replay a webhook delivery) are called through the Worker's
// real fetch with a database binding that fails after N statements (failing-db.ts), for
// N = 0, 1, 2, ... until the write succeeds (an outage from the Nth statement on; for
// the app create also a blip of one failing statement). Every refused attempt answers the catalogue
// envelope with a 5xx (spec B marks only rate_limited and ingest_write_unavailable
// retryable, so a failing database is internal_error, retryable false), and leaves no
// partial write behind: read back with the real database, the state is exactly as before
// the attempt, or the write is whole (as after a success). What each route did is logged
// (refusals before success, refusals that had nonetheless completed the write).
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";
import { waitFor } from "../../support/wait";
import { probe } from "./probe";
import { ingestManifest } from "../ingest/fixtures";

type Obj = Record<string, unknown>;
const receiver = inject("webhookReceiver");

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };
const manifest = (extra: Obj = {}) => ({ "x-service-manifest": { app: { name: "Faults" }, collections: { notes: owned }, ...extra } });

async function ownedApp(extra: Obj = {}) {
  const human = await signIn();
  const key = (await claimedAgent(human)).api_key;
  const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: manifest(extra) } }), 201);
  return { human, key, appId: app.app_id };
}

async function scalar(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql).bind(...binds).first<{ n: number }>())?.n ?? 0;
}

describe("faults: D1 failing at the data layer", { timeout: 60_000 }, () => {
  it("creating an app: refused whole or not at all", async () => {
    const human = await signIn();
    const key = (await claimedAgent(human)).api_key;
    const state = async () => ({
      apps: await scalar("SELECT count(*) AS n FROM apps WHERE owner_human_id = ?1", human.humanId),
      versions: await scalar("SELECT count(*) AS n FROM app_versions WHERE app_id IN (SELECT id FROM apps WHERE owner_human_id = ?1)", human.humanId),
    });
    const result = await probe({
      path: "/v1/apps",
      options: () => ({ key, json: { html: "<p>x</p>", manifest: manifest() } }),
      state,
      whole: async (before) => {
        const after = await state();
        if (after.apps !== before.apps + 1 || after.versions !== before.versions + 1) return false;
        // The new app answers and takes a row.
        const app = (await env.DB.prepare("SELECT id FROM apps WHERE owner_human_id = ?1 ORDER BY created_at DESC LIMIT 1").bind(human.humanId).first<{ id: string }>())!;
        return (await call(`/v1/apps/${app.id}/collections/notes`, { key, json: { data: { text: "works" } } })).status === 201;
      },
    });
    expect(result.refused).toBeGreaterThan(0);
  });

  it("creating an app with ingest hooks and webhooks through a one-statement blip: never an app without its hooks or secret", async () => {
    const human = await signIn();
    const key = (await claimedAgent(human)).api_key;
    const withEffects = ingestManifest([{ name: "h", collection: "issues", map: { title: "title" }, dedupeKey: "id" }], {
      webhooks: [{ on: "create", collection: "issues", url: `${receiver}/hook/never` }],
    });
    const ofOwner = "app_id IN (SELECT id FROM apps WHERE owner_human_id = ?1)";
    const state = async () => ({
      apps: await scalar("SELECT count(*) AS n FROM apps WHERE owner_human_id = ?1", human.humanId),
      hooks: await scalar(`SELECT count(*) AS n FROM ingest_hooks WHERE ${ofOwner}`, human.humanId),
      secrets: await scalar(`SELECT count(*) AS n FROM webhook_secrets WHERE ${ofOwner}`, human.humanId),
    });
    // After each refusal nothing is left; a success (or a refusal that had completed) has all three.
    const result = await probe({
      path: "/v1/apps",
      options: () => ({ key, json: { html: "<p>x</p>", manifest: withEffects } }),
      state,
      whole: async (before) => JSON.stringify(await state()) === JSON.stringify({ apps: before.apps + 1, hooks: before.hooks + 1, secrets: before.secrets + 1 }),
    }, 1);
    expect(result.refused).toBeGreaterThan(0);
  });

  it("creating a row: refused whole or not at all, the feed with it", async () => {
    const { key, appId } = await ownedApp();
    const rows = `/v1/apps/${appId}/collections/notes`;
    await json(await call(rows, { key, json: { data: { text: "first" } } }), 201);
    const state = async () => {
      const list = await json<{ rows: Array<{ key: string }> }>(await call(rows, { key }), 200);
      const feed = await json<{ entries: Array<{ seq: number }> }>(await call(`/v1/apps/${appId}/feed?since=0`, { key }), 200);
      return { rows: list.rows.map((row) => row.key).sort(), feed: feed.entries.map((entry) => entry.seq) };
    };
    const result = await probe({
      path: rows,
      options: () => ({ key, json: { key: "the-row", data: { text: "second" } } }),
      state,
      whole: async (before) => {
        const after = await state();
        const row = await call(`${rows}/the-row`, { key });
        if (row.status !== 200) return false;
        const body = await row.json<{ row?: { data: Obj; version: number }; data?: Obj; version?: number }>();
        const data = body.row?.data ?? body.data;
        return after.rows.length === before.rows.length + 1 && after.feed.length === before.feed.length + 1 && (data as Obj).text === "second";
      },
    });
    // Rows live in the app's store: once the key and the app are known (cached), a create
    // needs no D1 statement and goes through while D1 is down; otherwise refusals came first.
    expect(result.succeededAfter === 0 || result.refused > 0).toBe(true);
  });

  it("adding a member: refused whole or not at all", async () => {
    const { key, appId } = await ownedApp();
    const friend = await signIn();
    const state = async () => ({
      members: await scalar("SELECT count(*) AS n FROM app_members WHERE app_id = ?1", appId),
      invites: await scalar("SELECT count(*) AS n FROM app_invites WHERE app_id = ?1", appId),
    });
    const result = await probe({
      path: `/v1/apps/${appId}/members`,
      options: () => ({ key, json: { email: friend.email } }),
      state,
      whole: async (before) => {
        const after = await state();
        return after.members + after.invites === before.members + before.invites + 1;
      },
    });
    expect(result.refused).toBeGreaterThan(0);
  });

  it("replaying a webhook delivery: refused whole or not at all", async () => {
    const inbox = `faults-${crypto.randomUUID().slice(0, 8)}`;
    const { key, appId } = await ownedApp({ webhooks: [{ on: "create", collection: "notes", url: `${receiver}/hook/${inbox}` }] });
    await json(await call(`/v1/apps/${appId}/collections/notes`, { key, json: { data: { text: "hooked" } } }), 201);
    const original = await waitFor(async () => {
      const list = (await json<{ deliveries: Array<{ id: string; status: string }> }>(await call(`/v1/apps/${appId}/webhooks/deliveries`, { key }), 200)).deliveries;
      return list[0]?.status === "delivered" ? list[0] : null;
    }, { timeout: 30_000, message: "the first delivery made" });
    const state = async () => ({ replays: await scalar("SELECT count(*) AS n FROM webhook_deliveries WHERE replay_of_id = ?1", original.id) });
    const result = await probe({
      path: `/v1/apps/${appId}/webhooks/deliveries/${original.id}/replay`,
      options: () => ({ key, method: "POST" }),
      state,
      whole: async (before) => (await state()).replays === before.replays + 1,
    });
    expect(result.refused).toBeGreaterThan(0);
  });
});
