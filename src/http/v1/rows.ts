/**
 * Collection rows over the agent API (WIRE §2.3): list, count, get, create, update,
 * delete, purge, restore, the deleted list and batches. Each handler resolves the app
 * and the caller's principal, then makes ONE call to the app's AppStore, which decides
 * permissions under the live manifest and writes atomically.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { defineRoute } from "../routes";
import { parseQ } from "../row-query";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { appStore } from "../../apps/store";
import { requireShallow, storeCall, unwrap } from "../../apps/store-call";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

const B = "/v1/apps/:id/collections/:name";
const row = z.object({
  key: z.string(), data: z.unknown(), version: z.number().int(), author: z.object({ kind: z.string(), id: z.string() }),
  creator: z.object({ kind: z.string(), id: z.string() }), editor: z.object({ kind: z.string(), id: z.string() }),
  created_at: z.string(), updated_at: z.string(), deleted_at: z.string().nullable(),
});
const rowResponse = z.object({ row });
const ifMatch = z.number().int().min(0);
const batchResult = z.object({
  results: z.array(z.object({ index: z.number().int(), ok: z.boolean(), key: z.string().optional(), error: z.object({ code: z.string(), message: z.string(), status: z.number() }).optional() })),
  ok_count: z.number().int(), error_count: z.number().int(),
});

async function target(c: AppContext) {
  const app = requireLive(await ownedApp(c, c.req.param("id")!));
  return { app, store: appStore(c.env, app.id), call: storeCall(c, app), collection: c.req.param("name")! };
}

export function rowRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: B, tag: "rows", auth: "rows",
    summary: "List rows: where/sort in q (URL-encoded JSON), since = next_cursor of the previous page with the same sort",
    query: z.object({ since: z.string().max(2000).optional(), limit: z.coerce.number().int().min(1).max(1000).optional(), q: z.string().max(8000).optional() }),
    responses: { 200: { description: "A page of rows", schema: z.object({ rows: z.array(row), next_cursor: z.string().nullable(), has_more: z.boolean() }) }, ...errors(400, 401, 403, 404) },
  }, async (c, { query }) => {
    const t = await target(c);
    const { where, sort } = parseQ(query.q);
    return c.json(unwrap(await t.store.listRows(t.call, t.collection, { where, sort, since: query.since, limit: query.limit ?? 100 })));
  });

  defineRoute(app, {
    method: "get", path: `${B}/count`, tag: "rows", auth: "rows",
    summary: "Count live rows (gated by countRead)",
    responses: { 200: { description: "The count", schema: z.object({ count: z.number().int() }) }, ...errors(401, 403, 404) },
  }, async (c) => {
    const t = await target(c);
    return c.json({ count: unwrap(await t.store.countRows(t.call, t.collection)) });
  });

  defineRoute(app, {
    method: "get", path: `${B}/deleted`, tag: "rows", auth: "rows",
    summary: "Soft-deleted rows, newest deletion first (owner or agent only)",
    query: z.object({ before: z.string().max(64).optional(), limit: z.coerce.number().int().min(1).max(1000).optional() }),
    responses: { 200: { description: "Deleted rows" }, ...errors(400, 401, 403, 404) },
  }, async (c, { query }) => {
    const t = await target(c);
    return c.json(unwrap(await t.store.deletedRows(t.call, t.collection, { before: query.before, limit: query.limit ?? 100 })));
  });

  defineRoute(app, {
    method: "post", path: `${B}/batch`, tag: "rows", auth: "rows",
    summary: "Create many rows; per-row results, a bad row never aborts the rest (silent by default)",
    body: z.strictObject({
      rows: z.array(z.strictObject({ key: z.string().optional(), data: z.unknown() })).min(1),
      on: z.string().optional(), emitEffects: z.boolean().optional(),
      suppress: z.array(z.enum(["notify", "webhooks", "agentTasks"])).optional(),
    }),
    responses: { 200: { description: "Per-row results", schema: batchResult }, ...errors(400, 401, 403, 404, 413) },
  }, async (c, { body }) => {
    const cap = config(c.env).limits.BATCH_MAX_ROWS;
    if (body.rows.length > cap) throw new RelayError("invalid_request", `At most ${cap} rows per batch; got ${body.rows.length}.`, { field: "rows", limit: cap });
    if (body.on && body.rows.some((r) => r.key !== undefined)) throw new RelayError("invalid_request", "on cannot be combined with per-row keys.", { field: "on" });
    body.rows.forEach((r, i) => requireShallow(r.data, `rows.${i}.data`));
    const t = await target(c);
    return c.json(unwrap(await t.store.batchCreate(t.call, t.collection, { rows: body.rows, on: body.on, emitEffects: body.emitEffects, suppress: body.suppress })));
  });

  defineRoute(app, {
    method: "delete", path: `${B}/batch`, tag: "rows", auth: "rows",
    summary: "Soft-delete many rows by key; per-row results",
    body: z.strictObject({ keys: z.array(z.string().max(128)).min(1) }),
    responses: { 200: { description: "Per-row results", schema: batchResult }, ...errors(400, 401, 403, 404, 413) },
  }, async (c, { body }) => {
    const cap = config(c.env).limits.BATCH_MAX_ROWS;
    if (body.keys.length > cap) throw new RelayError("invalid_request", `At most ${cap} keys per batch; got ${body.keys.length}.`, { field: "keys", limit: cap });
    const t = await target(c);
    return c.json(unwrap(await t.store.batchDelete(t.call, t.collection, body.keys)));
  });

  const axes = z.object({ maxRows: z.number().int().nullable(), maxAgeDays: z.number().int().nullable() });
  const retentionView = z.object({ effective: axes, authorDefault: axes, override: axes, wouldPrune: z.number().int() });

  defineRoute(app, {
    method: "get", path: `${B}/retention`, tag: "rows", auth: "rows",
    summary: "Retention bounds: effective (override, else the manifest's default), and how many rows the next sweep would prune",
    responses: { 200: { description: "Retention", schema: retentionView }, ...errors(401, 403, 404) },
  }, async (c) => {
    const t = await target(c);
    return c.json(unwrap(await t.store.getRetention(t.call, t.collection)));
  });

  defineRoute(app, {
    method: "patch", path: `${B}/retention`, tag: "rows", auth: "rows",
    summary: "Set (number) or clear (null) the owner's override per axis; survives redeploys",
    body: z.strictObject({ maxRows: z.number().int().min(1).max(1_000_000).nullable().optional(), maxAgeDays: z.number().int().min(1).max(1_000_000).nullable().optional() }),
    responses: { 200: { description: "Retention", schema: retentionView }, ...errors(400, 401, 403, 404) },
  }, async (c, { body }) => {
    const t = await target(c);
    return c.json(unwrap(await t.store.setRetention(t.call, t.collection, body)));
  });

  defineRoute(app, {
    method: "post", path: B, tag: "rows", auth: "rows",
    summary: "Create a row (server key unless given; a given key that exists returns it with deduped; on = upsert by a unique field)",
    body: z.strictObject({ data: z.unknown(), key: z.string().max(128).optional(), on: z.string().max(64).optional() }),
    responses: { 201: { description: "Created", schema: rowResponse }, 200: { description: "Deduped or upserted", schema: rowResponse.extend({ deduped: z.literal(true).optional() }) }, ...errors(400, 401, 403, 404, 409, 413), 422: { description: "row_schema_violation" } },
  }, async (c, { body }) => {
    if (body.data === undefined) throw new RelayError("invalid_request", "A row needs `data`.", { field: "data" });
    requireShallow(body.data, "data");
    const t = await target(c);
    const result = unwrap(await t.store.createRow(t.call, t.collection, body));
    return c.json({ row: result.row, ...(result.deduped ? { deduped: true } : {}) }, result.created ? 201 : 200);
  });

  defineRoute(app, {
    method: "get", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "One live row",
    responses: { 200: { description: "The row", schema: rowResponse }, ...errors(401, 403, 404) },
  }, async (c) => {
    const t = await target(c);
    return c.json({ row: unwrap(await t.store.getRow(t.call, t.collection, c.req.param("key")!)) });
  });

  defineRoute(app, {
    method: "patch", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "Replace a row's data; if_match = the version you read (409 conflict with details.current otherwise)",
    body: z.strictObject({ data: z.unknown(), if_match: ifMatch.optional() }),
    responses: { 200: { description: "The updated row", schema: rowResponse }, ...errors(400, 401, 403, 404, 409, 413), 422: { description: "row_schema_violation" } },
  }, async (c, { body }) => {
    if (body.data === undefined) throw new RelayError("invalid_request", "A row needs `data`.", { field: "data" });
    requireShallow(body.data, "data");
    const t = await target(c);
    return c.json({ row: unwrap(await t.store.updateRow(t.call, t.collection, c.req.param("key")!, body)) });
  });

  defineRoute(app, {
    method: "delete", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "Soft-delete a row (restorable for 30 days); optional body { if_match }",
    body: z.strictObject({ if_match: ifMatch.optional() }), bodyOptional: true,
    responses: { 200: { description: "Deleted", schema: z.object({ deleted: z.literal(true), key: z.string() }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c, { body }) => {
    const t = await target(c);
    const key = c.req.param("key")!;
    unwrap(await t.store.deleteRow(t.call, t.collection, key, body));
    return c.json({ deleted: true as const, key });
  });

  defineRoute(app, {
    method: "delete", path: `${B}/:key/purge`, tag: "rows", auth: "rows",
    summary: "Destroy a live or deleted row's data for good (owner or agent); leaves an audited delete in the feed",
    responses: { 200: { description: "Purged", schema: z.object({ purged: z.literal(true), key: z.string() }) }, ...errors(401, 403, 404) },
  }, async (c) => {
    const t = await target(c);
    const key = c.req.param("key")!;
    unwrap(await t.store.purgeRow(t.call, t.collection, key));
    return c.json({ purged: true as const, key });
  });

  defineRoute(app, {
    method: "post", path: `${B}/:key/restore`, tag: "rows", auth: "rows",
    summary: "Restore a soft-deleted row within 30 days (owner or agent)",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The restored row", schema: rowResponse }, ...errors(400, 401, 403, 404, 409), 410: { description: "restore_expired" } },
  }, async (c) => {
    const t = await target(c);
    return c.json({ row: unwrap(await t.store.restoreRow(t.call, t.collection, c.req.param("key")!)) });
  });
}
