// The tools of WIRE-MCP §2 over /mcp, as a claimed agent: deploy an app, work its rows
// and feed, manage it, and see the §1.4 error shapes — a route's refusal flattened with
// its catalogue code (another owner's app is app_not_found, exactly as over /v1), a local
// argument check as invalid_args (missing, mistyped or unknown arguments, unknown actions,
// host file paths), and an operator-only action refused to a non-operator. Rows written through
// the tools are the rows /v1 serves.
import { describe, expect, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";
import { tool } from "./rpc";

const NOTE = { type: "object", properties: { title: { type: "string", maxLength: 100 }, done: { type: "boolean" } }, required: ["title"], additionalProperties: false };
const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: NOTE },
  "x-service-manifest": { app: { name: "Todos" }, collections: { todos: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"], countRead: ["owner"] } } },
};
const HTML = "<!doctype html><title>Todos</title><p>todos</p>";

async function deployed() {
  const human = await signIn();
  const agent = await claimedAgent(human);
  const created = await tool(agent.api_key, "deploy_app", { html: HTML, manifest: MANIFEST });
  expect(created.isError, created.text).toBe(false);
  return { human, key: agent.api_key, appId: created.value.app_id as string, created: created.value };
}

describe("MCP tools", () => {
  it("deploys, writes and reads rows, and the same rows are served through /v1", async () => {
    const { key, appId, created } = await deployed();
    expect(created).toMatchObject({ created: true, version: 1, visibility: "private" });

    const first = await tool(key, "upsert_row", { app_id: appId, collection: "todos", key: "milk", data: { title: "Buy milk" } });
    expect(first.value.row).toMatchObject({ key: "milk", data: { title: "Buy milk" }, version: 1 });
    // A string holding JSON text of an object is repaired into the object (§1.8); a retry with the key dedupes.
    const again = await tool(key, "upsert_row", { app_id: appId, collection: "todos", key: "milk", data: JSON.stringify({ title: "Other" }) });
    expect(again.value).toMatchObject({ row: { key: "milk", data: { title: "Buy milk" } }, deduped: true });
    await tool(key, "upsert_row", { app_id: appId, collection: "todos", key: "eggs", data: JSON.stringify({ title: "Eggs" }) });

    const updated = await tool(key, "update_row", { app_id: appId, collection: "todos", key: "milk", data: { title: "Buy milk", done: true }, if_match: 1 });
    expect(updated.value.row).toMatchObject({ version: 2, data: { done: true } });
    const stale = await tool(key, "update_row", { app_id: appId, collection: "todos", key: "milk", data: { title: "x" }, if_match: 1 });
    expect(stale.isError).toBe(true);
    expect(stale.value).toMatchObject({ error: "conflict", status: 409, message: expect.any(String), hint: expect.any(String), details: { current: { version: 2 } } });

    expect((await tool(key, "count_rows", { app_id: appId, collection: "todos" })).value).toEqual({ count: 2 });
    expect((await tool(key, "get_row", { app_id: appId, collection: "todos", key: "eggs" })).value.row.data).toEqual({ title: "Eggs" });
    expect((await tool(key, "delete_row", { app_id: appId, collection: "todos", key: "eggs" })).value).toEqual({ deleted: true, key: "eggs" });
    const bin = await tool(key, "list_deleted_rows", { app_id: appId, collection: "todos" });
    expect(bin.value.rows.map((r: { key: string }) => r.key)).toEqual(["eggs"]);
    expect((await tool(key, "restore_row", { app_id: appId, collection: "todos", key: "eggs" })).value.row.key).toBe("eggs");

    const listed = await tool(key, "list_rows", { app_id: appId, collection: "todos" });
    expect(listed.value.rows.map((r: { key: string }) => r.key).sort()).toEqual(["eggs", "milk"]);
    const viaV1 = await json<{ rows: unknown[] }>(await call(`/v1/apps/${appId}/collections/todos`, { key }), 200);
    expect(viaV1.rows).toEqual(listed.value.rows);

    const feed = await tool(key, "get_feed_events", { app_id: appId });
    // A restore comes back as a create.
    expect(feed.value.entries.map((e: { op: string; row_key: string }) => `${e.op} ${e.row_key}`)).toEqual(["create milk", "create eggs", "update milk", "delete eggs", "create eggs"]);
    expect(feed.value.cursor).toBeGreaterThan(0);
  });

  it("manages the app: list, show, update, redeploy, delete and restore, and whoami reports the caller", async () => {
    const { key, appId } = await deployed();
    const list = await tool(key, "apps", { action: "list" });
    expect(list.value.items.map((a: { id: string }) => a.id)).toContain(appId);
    expect((await tool(key, "apps", { action: "show", app_id: appId })).value.id).toBe(appId);
    expect((await tool(key, "apps", { action: "update", app_id: appId, visibility: "public" })).value).toMatchObject({ id: appId, visibility: "public" });
    const redeploy = await tool(key, "deploy_app", { app_id: appId, html: `${HTML}<p>v2</p>` });
    expect(redeploy.value).toMatchObject({ app_id: appId, version: 2, compat: "clean" });
    const dry = await tool(key, "deploy_app", { app_id: appId, html: HTML, check: true });
    expect(dry.value).toMatchObject({ ok: true });
    expect((await tool(key, "apps", { action: "delete", app_id: appId })).value).toEqual({ app_id: appId, deleted: true, restorable: true });
    expect((await tool(key, "apps", { action: "restore", app_id: appId })).value.id).toBe(appId);
    const me = await tool(key, "agent", { action: "whoami" });
    expect(me.value).toMatchObject({ api_key_present: true, claimed: true, key_prefix: key.slice(0, me.value.key_prefix.length) });
    expect(me.text).not.toContain(key);
    const skill = await tool(key, "get_skill", {});
    expect(skill.text.startsWith("<!-- service mcp guide")).toBe(true);
    expect((await tool(key, "get_skill", { version_only: true })).value).toEqual({ version: expect.any(String) });
  });

  it("answers failures in the §1.4 shapes", async () => {
    const { appId } = await deployed();
    const stranger = await claimedAgent(await signIn());
    const theirs = await tool(stranger.api_key, "get_row", { app_id: appId, collection: "todos", key: "milk" });
    expect(theirs).toMatchObject({ isError: true, value: { error: "app_not_found", status: 404, message: expect.any(String), hint: expect.any(String) } });
    expect((await tool(stranger.api_key, "apps", { action: "show", app_id: appId })).value.error).toBe("app_not_found");

    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["get_row", { app_id: appId, collection: "todos" }, /key/],
      ["get_row", { app_id: appId, collection: "todos", key: "" }, /key/],
      ["get_row", { app_id: appId, collection: "todos", key: 5 }, /key/],
      ["get_row", { app_id: appId, collection: "todos", key: "a", extra: true }, /extra/],
      ["apps", { action: "explode" }, /action/],
      ["apps", { action: "show" }, /show needs app_id/],
      ["upsert_row", { app_id: appId, collection: "todos", data: "not json" }, /data/],
      ["deploy_app", { html_path: "/etc/passwd", manifest: MANIFEST }, /html_path/],
      ["deploy_app", { html: HTML }, /create needs manifest/],
      ["key", { action: "revoke" }, /confirm/],
      ["attachments", { action: "download", attachment_id: "att_x", out_path: "/tmp/x" }, /out_path/],
    ];
    for (const [name, args, message] of cases) {
      const answer = await tool(stranger.api_key, name, args);
      expect(answer.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(Object.keys(answer.value).sort()).toEqual(["error", "message"]);
      expect(answer.value.error).toBe("invalid_args");
      expect(answer.value.message).toMatch(message);
    }

    const operatorOnly = await tool(stranger.api_key, "community", { action: "list_pending" });
    expect(operatorOnly).toMatchObject({ isError: true, value: { error: "not_a_reviewer", status: 403, hint: expect.any(String) } });
  });
});
