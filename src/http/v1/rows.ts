/**
 * Collection rows over the agent API (WIRE §2.3): list, count, get, create, update,
 * delete, purge, restore, the deleted list and batches. Each handler resolves the app
 * and the caller's principal, then makes ONE call to the app's AppStore, which decides
 * permissions under the live manifest and writes atomically.
 *
 * A batch checks each row with the very schema and checks the single-row route uses; a row
 * that fails them is an error in its own slot of `results` and the others are still
 * written (WIRE §2.3). Only a malformed call (no `rows` array, too many rows, an unknown
 * top-level field, `on` with per-row keys…) is refused whole.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import { parseWith } from "../plain-issues";
import { parseQ } from "../row-query";
import { onField, rowCreate, rowDelete, rowListQuery, rowUpdate, rowWrite } from "../row-bodies";
import type { AppContext, AppEnv } from "../types";
import { config, type Config } from "../../config";
import { RelayError } from "../../errors";
import { appStore } from "../../apps/store";
import { batchResult, callChecked, principalOf, requireRowData, storeCall, type BatchResult, type CheckedTarget } from "../../apps/store-call";
import { checkApiRowRefs } from "./attachments-refs";
import { recheckRowActor } from "../middleware/auth";
import { failureOf, type AppStoreApi, type BatchItem, type CallContext, type Outcome } from "../../../durable-objects/app-store/contract";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

const B = "/v1/apps/:id/collections/:name";
const row = z.object({
  key: z.string(), data: z.unknown(), version: z.number().int(), author: z.object({ kind: z.string(), id: z.string() }),
  creator: z.object({ kind: z.string(), id: z.string() }), editor: z.object({ kind: z.string(), id: z.string() }),
  created_at: z.string(), updated_at: z.string(), deleted_at: z.string().nullable(),
});
const rowResponse = z.object({ row });
const batchAnswer = z.object({
  results: z.array(z.object({
    index: z.number().int(), ok: z.boolean(), key: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string(), status: z.number(), details: z.record(z.string(), z.unknown()).optional() }).optional(),
  })),
  ok_count: z.number().int(), error_count: z.number().int(),
});

/** A key to delete, in a batch: any string; a key no row can have is that row's row_not_found, as on the single route. */
const deleteKey = z.string();

/**
 * The body cap of a batch create: BATCH_MAX_ROWS rows of MAX_ROW_DATA_BYTES each, plus
 * the JSON around each row (`{"key":"…128 characters…","data":…},` and some whitespace,
 * within 1 KiB) and around the call (`{"rows":[…],"on":…,"suppress":[…]}`, within 4 KiB);
 * never below MAX_JSON_BODY_BYTES. Rows of `storage: "document"` collections may be larger
 * (MAX_DOCUMENT_ROW_DATA_BYTES), so a batch of those carries fewer rows per call.
 */
export const BATCH_ROW_OVERHEAD_BYTES = 1024;
export const BATCH_CALL_OVERHEAD_BYTES = 4096;
export function batchBodyBytes(cfg: Config): number {
  const { BATCH_MAX_ROWS, MAX_ROW_DATA_BYTES } = cfg.limits;
  return Math.max(cfg.maxJsonBodyBytes, BATCH_MAX_ROWS * (MAX_ROW_DATA_BYTES + BATCH_ROW_OVERHEAD_BYTES) + BATCH_CALL_OVERHEAD_BYTES);
}

/**
 * A batch element at the edge: any JSON value, since a bad element is an error in its own
 * result and not a 400 for the call. The OpenAPI document shows the schema each element is
 * then checked against (`item`).
 */
function element(item: z.ZodType): z.ZodUnknown {
  const { $schema: _ignored, ...shape } = z.toJSONSchema(item, { io: "input" }) as Record<string, unknown>;
  return z.unknown().meta(shape);
}

/**
 * Runs a batch whose elements are checked here first: an element `check` refuses gets its
 * error in its own result; the rest go to the store in one call (even none, so an undeclared
 * collection is still the call's 404), and its answers are put back at their places.
 */
async function perRow<T>(items: unknown[], check: (raw: unknown, index: number) => T, send: (good: T[]) => Promise<BatchItem[]>): Promise<BatchResult> {
  const answered: BatchItem[] = new Array(items.length);
  const good: T[] = [];
  const places: number[] = [];
  items.forEach((raw, index) => {
    try {
      good.push(check(raw, index));
      places.push(index);
    } catch (err) {
      if (!(err instanceof RelayError)) throw err;
      answered[index] = { index, ok: false, error: failureOf(err) };
    }
  });
  for (const item of await send(good)) {
    const index = places[item.index];
    answered[index] = { ...item, index };
  }
  return batchResult(answered);
}

function hasKey(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && (raw as { key?: unknown }).key !== undefined;
}

/** The errors a collection route documents, with 409: any call may meet `conflict` (access_changed) when access changes twice while it runs. */
const rowErrors = (...statuses: number[]) => errors(...statuses, 409);

/**
 * One store call for a collection request. The store re-judges the call against changes
 * made since the caller was checked (a reused agent key lookup among them) and, when it
 * turns the call away, the caller is checked again and the call resent (`callChecked`).
 */
async function toStore<T>(c: AppContext, send: (store: AppStoreApi, call: CallContext, collection: string) => Promise<Outcome<T>>): Promise<T> {
  const resolve = async (): Promise<CheckedTarget> => {
    const app = requireLive(await ownedApp(c, c.req.param("id")!));
    return { store: appStore(c.env, app.id), call: storeCall(c, app, true) };
  };
  const collection = c.req.param("name")!;
  return callChecked(await resolve(), async () => {
    await recheckRowActor(c);
    return resolve();
  }, (store, call) => send(store, call, collection));
}

export function rowRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: B, tag: "rows", auth: "rows",
    summary: "List rows: where/sort in q (URL-encoded JSON), since = next_cursor of the previous page with the same sort",
    query: rowListQuery,
    responses: { 200: { description: "A page of rows", schema: z.object({ rows: z.array(row), next_cursor: z.string().nullable(), has_more: z.boolean() }) }, ...rowErrors(400, 401, 403, 404) },
  }, async (c, { query }) => {
    const { where, sort } = parseQ(query.q);
    return c.json(await toStore(c, (store, call, collection) => store.listRows(call, collection, { where, sort, since: query.since, limit: query.limit ?? 100 })));
  });

  defineRoute(app, {
    method: "get", path: `${B}/count`, tag: "rows", auth: "rows",
    summary: "Count live rows (gated by countRead)",
    responses: { 200: { description: "The count", schema: z.object({ count: z.number().int() }) }, ...rowErrors(401, 403, 404) },
  }, async (c) => {
    return c.json({ count: await toStore(c, (store, call, collection) => store.countRows(call, collection)) });
  });

  defineRoute(app, {
    method: "get", path: `${B}/deleted`, tag: "rows", auth: "rows",
    summary: "Soft-deleted rows, newest deletion first (owner or agent only)",
    query: z.object({ before: z.string().max(64).optional(), limit: z.coerce.number().int().min(1).max(1000).optional() }),
    responses: { 200: { description: "Deleted rows" }, ...rowErrors(400, 401, 403, 404) },
  }, async (c, { query }) => {
    return c.json(await toStore(c, (store, call, collection) => store.deletedRows(call, collection, { before: query.before, limit: query.limit ?? 100 })));
  });

  defineRoute(app, {
    method: "post", path: `${B}/batch`, tag: "rows", auth: "rows", maxBodyBytes: batchBodyBytes,
    summary: "Create many rows (at most BATCH_MAX_ROWS; the body may hold that many rows of MAX_ROW_DATA_BYTES); per-row results, a bad row never aborts the rest (silent by default)",
    body: z.strictObject({
      rows: z.array(element(rowWrite)).min(1),
      on: onField.optional(), emitEffects: z.boolean().optional(),
      suppress: z.array(z.enum(["notify", "webhooks", "agentTasks"])).optional(),
    }),
    responses: { 200: { description: "Per-row results", schema: batchAnswer }, ...rowErrors(400, 401, 403, 404, 413) },
  }, async (c, { body }) => {
    const cap = config(c.env).limits.BATCH_MAX_ROWS;
    if (body.rows.length > cap) throw new RelayError("invalid_request", `At most ${cap} rows per batch; got ${body.rows.length}.`, { field: "rows", limit: cap });
    if (body.on !== undefined && body.rows.some(hasKey)) throw new RelayError("invalid_request", "on cannot be combined with per-row keys.", { field: "on" });
    const check = (raw: unknown, index: number) => {
      const row = parseWith(rowWrite, raw, "body", ["rows", index]);
      requireRowData(row.data, `rows.${index}.data`);
      return row;
    };
    return c.json(await perRow(body.rows, check, async (rows) => {
      await checkApiRowRefs(c, principalOf(c), rows.map((row) => row.data));
      return toStore(c, (store, call, collection) =>
        store.batchCreate(call, collection, { rows, on: body.on, emitEffects: body.emitEffects, suppress: body.suppress }));
    }));
  });

  defineRoute(app, {
    method: "delete", path: `${B}/batch`, tag: "rows", auth: "rows",
    summary: "Soft-delete many rows by key (at most BATCH_MAX_ROWS); per-row results, a bad key never aborts the rest",
    body: z.strictObject({ keys: z.array(element(deleteKey)).min(1) }),
    responses: { 200: { description: "Per-row results", schema: batchAnswer }, ...rowErrors(400, 401, 403, 404, 413) },
  }, async (c, { body }) => {
    const cap = config(c.env).limits.BATCH_MAX_ROWS;
    if (body.keys.length > cap) throw new RelayError("invalid_request", `At most ${cap} keys per batch; got ${body.keys.length}.`, { field: "keys", limit: cap });
    return c.json(await perRow(body.keys, (raw, index) => parseWith(deleteKey, raw, "body", ["keys", index]), (keys) =>
      toStore(c, (store, call, collection) => store.batchDelete(call, collection, keys))));
  });

  const axes = z.object({ maxRows: z.number().int().nullable(), maxAgeDays: z.number().int().nullable() });
  const retentionView = z.object({ effective: axes, authorDefault: axes, override: axes, wouldPrune: z.number().int() });

  defineRoute(app, {
    method: "get", path: `${B}/retention`, tag: "rows", auth: "rows",
    summary: "Retention bounds: effective (override, else the manifest's default), and how many rows the next sweep would prune",
    responses: { 200: { description: "Retention", schema: retentionView }, ...rowErrors(401, 403, 404) },
  }, async (c) => {
    return c.json(await toStore(c, (store, call, collection) => store.getRetention(call, collection)));
  });

  defineRoute(app, {
    method: "patch", path: `${B}/retention`, tag: "rows", auth: "rows",
    summary: "Set (number) or clear (null) the owner's override per axis; survives redeploys",
    body: z.strictObject({ maxRows: z.number().int().min(1).max(1_000_000).nullable().optional(), maxAgeDays: z.number().int().min(1).max(1_000_000).nullable().optional() }),
    responses: { 200: { description: "Retention", schema: retentionView }, ...rowErrors(400, 401, 403, 404) },
  }, async (c, { body }) => {
    return c.json(await toStore(c, (store, call, collection) => store.setRetention(call, collection, body)));
  });

  defineRoute(app, {
    method: "post", path: B, tag: "rows", auth: "rows",
    summary: "Create a row (server key unless given; a given key that exists returns it with deduped; on = upsert by a unique field)",
    body: rowCreate,
    responses: { 201: { description: "Created", schema: rowResponse }, 200: { description: "Deduped or upserted", schema: rowResponse.extend({ deduped: z.literal(true).optional() }) }, ...rowErrors(400, 401, 403, 404, 409, 413), 422: { description: "row_schema_violation" } },
  }, async (c, { body }) => {
    requireRowData(body.data, "data");
    await checkApiRowRefs(c, principalOf(c), [body.data]);
    const result = await toStore(c, (store, call, collection) => store.createRow(call, collection, body));
    return c.json({ row: result.row, ...(result.deduped ? { deduped: true } : {}) }, result.created ? 201 : 200);
  });

  defineRoute(app, {
    method: "get", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "One live row",
    responses: { 200: { description: "The row", schema: rowResponse }, ...rowErrors(401, 403, 404) },
  }, async (c) => {
    return c.json({ row: await toStore(c, (store, call, collection) => store.getRow(call, collection, c.req.param("key")!)) });
  });

  defineRoute(app, {
    method: "patch", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "Replace a row's data; if_match = the version you read (409 conflict with details.current otherwise)",
    body: rowUpdate,
    responses: { 200: { description: "The updated row", schema: rowResponse }, ...rowErrors(400, 401, 403, 404, 409, 413), 422: { description: "row_schema_violation" } },
  }, async (c, { body }) => {
    requireRowData(body.data, "data");
    await checkApiRowRefs(c, principalOf(c), [body.data]);
    return c.json({ row: await toStore(c, (store, call, collection) => store.updateRow(call, collection, c.req.param("key")!, body)) });
  });

  defineRoute(app, {
    method: "delete", path: `${B}/:key`, tag: "rows", auth: "rows",
    summary: "Soft-delete a row (restorable for 30 days); optional body { if_match }",
    body: rowDelete, bodyOptional: true,
    responses: { 200: { description: "Deleted", schema: z.object({ deleted: z.literal(true), key: z.string() }) }, ...rowErrors(400, 401, 403, 404, 409) },
  }, async (c, { body }) => {
    const key = c.req.param("key")!;
    await toStore(c, (store, call, collection) => store.deleteRow(call, collection, key, body));
    return c.json({ deleted: true as const, key });
  });

  defineRoute(app, {
    method: "delete", path: `${B}/:key/purge`, tag: "rows", auth: "rows",
    summary: "Destroy a live or deleted row's data for good (owner or agent); leaves an audited delete in the feed",
    responses: { 200: { description: "Purged", schema: z.object({ purged: z.literal(true), key: z.string() }) }, ...rowErrors(401, 403, 404) },
  }, async (c) => {
    const key = c.req.param("key")!;
    await toStore(c, (store, call, collection) => store.purgeRow(call, collection, key));
    return c.json({ purged: true as const, key });
  });

  defineRoute(app, {
    method: "post", path: `${B}/:key/restore`, tag: "rows", auth: "rows",
    summary: "Restore a soft-deleted row within 30 days (owner or agent)",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The restored row", schema: rowResponse }, ...rowErrors(400, 401, 403, 404, 409), 410: { description: "restore_expired" } },
  }, async (c) => {
    return c.json({ row: await toStore(c, (store, call, collection) => store.restoreRow(call, collection, c.req.param("key")!)) });
  });
}
