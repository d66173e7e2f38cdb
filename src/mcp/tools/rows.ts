/**
 * The row tools of WIRE-MCP §2.2–2.9 and the feed poll of §2.10: each is one `/v1`
 * collection or feed route, called as the agent, so the collection's read/write lists,
 * schema, unique fields, if_match and quotas decide exactly as they do over HTTP.
 */
import * as z from "zod";
import { defineTool, hints, present, relay, repaired, required, type ToolDef } from "../define";
import { seg } from "../relay-call";

const collectionPath = (appId: string, collection: string) => `/v1/apps/${seg(appId)}/collections/${seg(collection)}`;
const rowPath = (appId: string, collection: string, key: string) => `${collectionPath(appId, collection)}/${seg(key)}`;
const anyJson = z.unknown().meta({ description: "Any JSON value; a string holding JSON text of an object is read as that object" });

const inCollection = { app_id: required, collection: required };
const atRow = { ...inCollection, key: required };

export const rowTools: ToolDef[] = [
  defineTool({
    name: "list_rows", annotations: hints("List Rows", "T", "-", "-", "F"),
    description: "One page of a collection's current rows you may read. Poll for changes by passing the previous next_cursor as since.",
    input: z.strictObject({ ...inCollection, since: z.string().optional(), limit: z.number().int().min(1).max(1000).optional() }),
    run: (args, host) => relay(host, { method: "GET", path: collectionPath(args.app_id, args.collection), query: { since: args.since, limit: args.limit } }),
  }),
  defineTool({
    name: "count_rows", annotations: hints("Count Rows", "T", "-", "-", "F"),
    description: "The number of live rows in a collection (needs the collection's countRead opt-in; independent of read).",
    input: z.strictObject(inCollection),
    run: (args, host) => relay(host, { method: "GET", path: `${collectionPath(args.app_id, args.collection)}/count` }),
  }),
  defineTool({
    name: "get_row", annotations: hints("Get Row", "T", "-", "-", "F"),
    description: "One row by key; a row you may not read answers row_not_found.",
    input: z.strictObject(atRow),
    run: (args, host) => relay(host, { method: "GET", path: rowPath(args.app_id, args.collection, args.key) }),
  }),
  defineTool({
    name: "upsert_row", annotations: hints("Upsert Row", "F", "F", "F", "F"),
    description: "Create a row, or get the existing row back (deduped: true) when key already exists. Give a stable key so retries are safe. An agent may create only when `agent` is in the collection's write list.",
    input: z.strictObject({ ...inCollection, key: z.string().optional(), data: anyJson }),
    run: (args, host) => relay(host, { method: "POST", path: collectionPath(args.app_id, args.collection), body: present({ data: repaired(args.data, "data"), key: args.key }) }),
  }),
  defineTool({
    name: "update_row", annotations: hints("Update Row", "F", "F", "T", "F"),
    description: "Replace a row's whole data, optionally only if its version is if_match (a mismatch is conflict with details.current).",
    input: z.strictObject({ ...atRow, data: anyJson, if_match: z.number().int().optional() }),
    run: (args, host) => relay(host, { method: "PATCH", path: rowPath(args.app_id, args.collection, args.key), body: present({ data: repaired(args.data, "data"), if_match: args.if_match }) }),
  }),
  defineTool({
    name: "delete_row", annotations: hints("Delete Row", "F", "T", "T", "F"),
    description: "Soft-delete a row (restorable for the retention window); the feed shows op delete. Returns { deleted: true, key }.",
    input: z.strictObject({ ...atRow, if_match: z.number().int().optional() }),
    run: async (args, host) => {
      await relay(host, { method: "DELETE", path: rowPath(args.app_id, args.collection, args.key), ...(args.if_match !== undefined ? { body: { if_match: args.if_match } } : {}) });
      return { deleted: true, key: args.key };
    },
  }),
  defineTool({
    name: "list_deleted_rows", annotations: hints("List Deleted Rows", "T", "F", "T", "F"),
    description: "A collection's recovery bin, newest deletion first (owner and agent only). Page with before = next_before.",
    input: z.strictObject({ ...inCollection, limit: z.number().int().min(1).optional(), before: z.string().optional() }),
    run: (args, host) => relay(host, { method: "GET", path: `${collectionPath(args.app_id, args.collection)}/deleted`, query: { limit: args.limit, before: args.before } }),
  }),
  defineTool({
    name: "restore_row", annotations: hints("Restore Row", "F", "F", "F", "F"),
    description: "Undo a soft delete: the original data and creator come back with a new version (owner and agent only).",
    input: z.strictObject(atRow),
    run: (args, host) => relay(host, { method: "POST", path: `${rowPath(args.app_id, args.collection, args.key)}/restore` }),
  }),
  defineTool({
    name: "get_feed_events", annotations: hints("Get App Feed Events", "T", "-", "-", "F"),
    description: "Long-poll the app's change feed: entries after since (the previous cursor; 0 when absent), held up to wait seconds when caught up (about 25 is a good wait). resync_required means list the collections again.",
    input: z.strictObject({ app_id: required, since: z.number().int().min(0).optional(), limit: z.number().int().min(1).optional(), wait: z.number().int().min(0).max(30).optional() }),
    run: (args, host) => relay(host, { method: "GET", path: `/v1/apps/${seg(args.app_id)}/feed`, query: { since: args.since ?? 0, limit: args.limit, wait: args.wait } }),
  }),
];
