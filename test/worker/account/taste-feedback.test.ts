// Taste notes and feedback (WIRE §2.11) as the published client calls them: the exact
// shapes, whole replace, the byte cap counted in UTF-8, idempotent clear, notes shared by
// an agent's sibling keys, hidden from other agents and deleted with the human's account;
// feedback filed with and without an app, the message trimmed and not echoed, listed
// newest first with before/next_before; every bad input refused with its catalogue code
// while nothing changes; and the MCP `taste` and `feedback` tools working on the routes.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, claimedAgent, expectError, json, register, signIn } from "../helpers";
import { form, mailedToken, setup } from "./fixtures";
import { tool } from "../mcp/rpc";

type Obj = Record<string, unknown>;

async function taste(key: string): Promise<Obj> {
  return json(await call("/v1/taste", { key }), 200);
}

function putTaste(key: string, body: unknown): Promise<Response> {
  return call("/v1/taste", { method: "PUT", key, json: body });
}

async function feedbackRows(agentId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM feedback_items WHERE agent_id = ?1").bind(agentId).first<{ n: number }>();
  return row!.n;
}

describe("taste notes", () => {
  it("reads null before anything is set, replaces whole, counts UTF-8 bytes and clears idempotently", async () => {
    const agent = await register("taste");
    expect(await taste(agent.api_key)).toEqual({ taste: null, updated_at: null, bytes: 0 });

    const first = await json<Obj>(await putTaste(agent.api_key, { taste: "Likes dark themes.\nNo emoji." }), 200);
    expect(first).toEqual({ taste: "Likes dark themes.\nNo emoji.", updated_at: expect.any(String), bytes: 28 });
    expect(Number.isNaN(Date.parse(first.updated_at as string))).toBe(false);

    const second = await json<Obj>(await putTaste(agent.api_key, { taste: "Größe: klein ✓" }), 200);
    expect(second.taste).toBe("Größe: klein ✓");
    expect(second.bytes).toBe(new TextEncoder().encode("Größe: klein ✓").byteLength);
    expect(await taste(agent.api_key)).toEqual(second);

    const cleared = await call("/v1/taste", { method: "DELETE", key: agent.api_key });
    expect(cleared.status).toBe(204);
    expect(await cleared.text()).toBe("");
    expect((await call("/v1/taste", { method: "DELETE", key: agent.api_key })).status).toBe(204);
    expect(await taste(agent.api_key)).toEqual({ taste: null, updated_at: null, bytes: 0 });
  });

  it("belongs to the agent: a sibling key sees the notes, another agent does not", async () => {
    const agent = await register("taste-owner");
    const other = await register("taste-stranger");
    await json(await putTaste(agent.api_key, { taste: "Serif headings" }), 200);
    const sibling = await json<{ api_key: string }>(await call("/v1/keys", { method: "POST", key: agent.api_key }), 201);
    expect((await taste(sibling.api_key)).taste).toBe("Serif headings");
    expect((await taste(other.api_key)).taste).toBeNull();
    expect((await call("/v1/taste", { method: "DELETE", key: other.api_key })).status).toBe(204);
    expect((await taste(agent.api_key)).taste).toBe("Serif headings");
  });

  it("refuses blank, mistyped, oversized and unknown-field bodies, keeping the notes", async () => {
    const agent = await register("taste-bad");
    const kept = await json<Obj>(await putTaste(agent.api_key, { taste: "Keep me" }), 200);

    for (const body of [{ taste: "" }, { taste: "  \n\t " }]) {
      const e = await expectError(await putTaste(agent.api_key, body), 400, "invalid_request");
      expect(e.details).toMatchObject({ field: "taste" });
    }
    for (const body of [{}, { taste: 5 }, { taste: null }, { taste: "x", extra: true }, [], "text"]) {
      await expectError(await putTaste(agent.api_key, body), 400, "invalid_request");
    }
    await expectError(await call("/v1/taste", { method: "PUT", key: agent.api_key, body: "{not json", contentType: "application/json" }), 400, "invalid_request");

    // 16,384 bytes is the cap: exactly at it is kept, one byte over is refused (a 3-byte character counts 3).
    const atCap = "é".repeat(8192);
    expect((await json<Obj>(await putTaste(agent.api_key, { taste: atCap }), 200)).bytes).toBe(16_384);
    const over = await expectError(await putTaste(agent.api_key, { taste: `${atCap}x` }), 413, "payload_too_large");
    expect(over.details).toMatchObject({ limit: 16_384, bytes: 16_385, field: "taste" });
    expect((await taste(agent.api_key)).bytes).toBe(16_384);

    const smaller = await callWith({ MAX_TASTE_BYTES: "10" }, "/v1/taste", { method: "PUT", key: agent.api_key, json: { taste: "eleven char" } });
    expect((await expectError(smaller, 413, "payload_too_large")).details).toMatchObject({ limit: 10 });

    await json(await putTaste(agent.api_key, { taste: "Keep me" }), 200);
    expect((await taste(agent.api_key)).taste).toBe(kept.taste);
  });

  it("are deleted with the account of the human the agent works for", async () => {
    const me = await signIn();
    const agent = await claimedAgent(me, "taste-deleted");
    const bystander = await register("taste-bystander");
    await json(await putTaste(agent.api_key, { taste: "Prefers big buttons" }), 200);
    await json(await putTaste(bystander.api_key, { taste: "Unrelated" }), 200);
    await json(await call("/v1/self", { method: "DELETE", session: me.session }), 202);
    const token = await mailedToken(me.email, "account/delete");
    expect((await call("/account/delete", { method: "POST", session: me.session, ...form([["token", token]]) })).status).toBe(200);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM taste_notes WHERE agent_id = ?1").bind(agent.agent_id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect((await taste(bystander.api_key)).taste).toBe("Unrelated");
  });

  it("needs an agent key on every verb", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      await expectError(await call("/v1/taste", { method, json: method === "PUT" ? { taste: "x" } : undefined }), 401, "unauthorized");
      await expectError(await call("/v1/taste", { method, key: "svc_00000000000000000000000000000000" }), 401, "invalid_api_key");
    }
    await expectError(await call("/v1/taste", { method: "POST", json: {} }), 405, "method_not_allowed");
  });
});

describe("feedback", () => {
  it("files items with and without an app, trims the message and does not echo it", async () => {
    const s = await setup("private", "Feedback board");
    const filed = await json<Obj>(await call("/v1/feedback", { key: s.key, json: { type: "bug", message: "  The feed stalls after 25 s  " } }), 201);
    expect(Object.keys(filed).sort()).toEqual(["created_at", "id", "type"]);
    expect(filed.type).toBe("bug");

    const bySlug = await json<Obj>(await call("/v1/feedback", { key: s.key, json: { type: "note", message: "about my app", app_id: s.app.slug } }), 201);
    const byId = await json<Obj>(await call("/v1/feedback", { key: s.key, json: { type: "feature", message: "x".repeat(4000), app_id: s.app.app_id } }), 201);

    const page = await json<{ items: Obj[]; next_before?: string }>(await call("/v1/feedback", { key: s.key }), 200);
    expect(page.next_before).toBeUndefined();
    expect(page.items.map((item) => item.id)).toEqual([byId.id, bySlug.id, filed.id]);
    expect(page.items[2]).toEqual({ id: filed.id, type: "bug", message: "The feed stalls after 25 s", app_id: null, created_at: filed.created_at });
    expect(page.items[1]!.app_id).toBe(s.app.app_id);
    expect(page.items[0]!.app_id).toBe(s.app.app_id);
  });

  it("pages newest first with before and next_before, and lists only the caller's own items", async () => {
    const agent = await register("feedback-pager");
    const other = await register("feedback-other");
    await json(await call("/v1/feedback", { key: other.api_key, json: { type: "note", message: "not yours" } }), 201);
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      ids.push((await json<{ id: string }>(await call("/v1/feedback", { key: agent.api_key, json: { type: "note", message: `item ${n}` } }), 201)).id);
    }
    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await json<{ items: Array<{ id: string }>; next_before?: string }>(
        await call(`/v1/feedback?limit=2${before ? `&before=${before}` : ""}`, { key: agent.api_key }), 200);
      seen.push(...page.items.map((item) => item.id));
      if (!page.next_before) break;
      expect(page.items).toHaveLength(2);
      before = page.next_before;
    }
    expect(seen).toEqual(newestFirst);
    const theirs = await json<{ items: Array<{ message: string }> }>(await call("/v1/feedback", { key: other.api_key }), 200);
    expect(theirs.items.map((item) => item.message)).toEqual(["not yours"]);
  });

  it("refuses every bad input with its catalogue code and stores nothing", async () => {
    const s = await setup("private", "Feedback refusals");
    const stranger = await setup("private", "Someone else's");
    const unclaimed = await register("feedback-unclaimed");
    const agentId = s.who.agent.agent_id;
    const before = await feedbackRows(agentId);

    const bodies: unknown[] = [
      {}, { type: "bug" }, { message: "no type" }, { type: "praise", message: "x" }, { type: "bug", message: "" },
      { type: "bug", message: "   " }, { type: "bug", message: "x".repeat(4001) }, { type: "bug", message: 7 },
      { type: "bug", message: "x", app_id: 12 }, { type: "bug", message: "x", app_id: "" }, { type: "bug", message: "x", extra: 1 }, null, [],
    ];
    for (const body of bodies) await expectError(await call("/v1/feedback", { key: s.key, json: body }), 400, "invalid_request");
    await expectError(await call("/v1/feedback", { key: s.key, body: "type=bug", contentType: "application/x-www-form-urlencoded" }), 400, "invalid_request");

    const foreign = await expectError(await call("/v1/feedback", { key: s.key, json: { type: "bug", message: "x", app_id: stranger.app.app_id } }), 404, "app_not_found");
    expect(foreign.details).toMatchObject({ field: "app_id" });
    await expectError(await call("/v1/feedback", { key: s.key, json: { type: "bug", message: "x", app_id: "anosuchappatallxxxxxxxxx" } }), 404, "app_not_found");
    await expectError(await call("/v1/feedback", { key: unclaimed.api_key, json: { type: "bug", message: "x", app_id: s.app.app_id } }), 404, "app_not_found");
    expect(await feedbackRows(agentId)).toBe(before);

    for (const query of ["limit=0", "limit=101", "limit=two", "limit=1.5", "before="]) {
      await expectError(await call(`/v1/feedback?${query}`, { key: s.key }), 400, "invalid_request");
    }
    const theirs = await json<{ id: string }>(await call("/v1/feedback", { key: stranger.key, json: { type: "note", message: "mine" } }), 201);
    for (const cursor of ["fb_unknown", theirs.id]) {
      const e = await expectError(await call(`/v1/feedback?before=${cursor}`, { key: s.key }), 400, "invalid_request");
      expect(e.details).toMatchObject({ field: "before" });
    }
    await expectError(await call("/v1/feedback"), 401, "unauthorized");
    await expectError(await call("/v1/feedback", { json: { type: "bug", message: "x" } }), 401, "unauthorized");
  });
});

describe("through the MCP tools, which call these routes in process", () => {
  it("taste get, set and clear, and feedback create and list, answer the shapes WIRE-MCP gives", async () => {
    const s = await setup("private", "MCP feedback");
    expect((await tool(s.key, "taste", { action: "get" })).value).toEqual({ taste: null, updated_at: null, bytes: 0 });
    expect((await tool(s.key, "taste", { action: "set", taste: "Rounded corners" })).value).toMatchObject({ taste: "Rounded corners", bytes: 15 });
    expect((await tool(s.key, "taste", { action: "clear" })).value).toEqual({ cleared: true });
    expect((await tool(s.key, "taste", { action: "get" })).value.taste).toBeNull();

    const filed = await tool(s.key, "feedback", { action: "create", type: "note", message: "via MCP", app_id: s.app.app_id });
    expect(filed.isError).toBe(false);
    expect(Object.keys(filed.value).sort()).toEqual(["created_at", "id", "type"]);
    const listed = await tool(s.key, "feedback", { action: "list", limit: 5 });
    expect(listed.value.items[0]).toEqual({ id: filed.value.id, type: "note", message: "via MCP", app_id: s.app.app_id, created_at: filed.value.created_at });
    const refused = await tool(s.key, "feedback", { action: "create", type: "bug", message: "x".repeat(4001) });
    expect(refused.isError).toBe(true);
    expect(refused.value).toMatchObject({ error: "invalid_request", status: 400 });
  });
});
