/**
 * Browsing a collection's rows a page at a time for a person (the owner console), through
 * the same store call as `GET /v1/apps/:id/collections/:name`: the same `where` and `sort`
 * (the API's `q`), read with the caller's own permissions. On top of what the store
 * offers it adds two things a person expects from a list:
 * - newest first: the store lists rows in insertion order, so without a `sort` the page
 *   holds the rows just before the cursor row, in reverse;
 * - a text search: only rows whose key or any value in their data contains the text,
 *   ignoring case.
 * The cursor is the key of the last row shown. The store's own pages are read in order up
 * to that row and only a page's worth of rows is kept, so memory stays small; the reading
 * is bounded by the app's row cap (MAX_ROWS_PER_APP). A cursor row that is not (or no
 * longer) in the list is refused as `invalid_request`, never skipped silently.
 */
import { RelayError } from "../errors";
import type { AppStoreApi, CallContext, RowView } from "../../durable-objects/app-store/contract";
import { unwrap } from "./store-call";

/** How many rows each store read asks for (the store's own list maximum). */
const STORE_PAGE = 1000;

export interface RowBrowseQuery {
  where?: unknown;
  /** The API's sort; without one, rows come newest first. */
  sort?: unknown;
  /** Keep only rows whose key or data contains this text (any case). */
  text?: string;
  /** The key of the last row of the previous page. */
  after?: string;
  limit: number;
}

export interface RowBrowsePage {
  rows: RowView[];
  /** The cursor of the next page, or null on the last one. */
  next: string | null;
}

/** Whether any string, number or boolean inside `value` contains `needle` (already lower case). */
function containsText(value: unknown, needle: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "string") return value.toLowerCase().includes(needle);
  if (typeof value === "number" || typeof value === "boolean") return String(value).includes(needle);
  if (Array.isArray(value)) return value.some((item) => containsText(item, needle));
  if (typeof value === "object") return Object.values(value).some((item) => containsText(item, needle));
  return false;
}

export function rowMatchesText(row: RowView, text: string | undefined): boolean {
  if (!text) return true;
  const needle = text.toLowerCase();
  return row.key.toLowerCase().includes(needle) || containsText(row.data, needle);
}

/** Every row of the listing, in the store's order, one store page at a time; stops when `visit` says so. */
async function eachRow(
  store: AppStoreApi, call: CallContext, collection: string, query: RowBrowseQuery, visit: (row: RowView) => "more" | "stop",
): Promise<void> {
  let since: string | undefined;
  for (;;) {
    const page = unwrap(await store.listRows(call, collection, { where: query.where, sort: query.sort, since, limit: STORE_PAGE }));
    for (const row of page.rows) {
      if (rowMatchesText(row, query.text) && visit(row) === "stop") return;
    }
    if (!page.has_more || page.next_cursor === null) return;
    since = page.next_cursor;
  }
}

function cursorGone(after: string): RelayError {
  return new RelayError("invalid_request",
    `The page cursor names row "${after.slice(0, 128)}", which is not in this list (it was deleted, or the search changed). Start again from the first page.`,
    { field: "after" });
}

/** Newest first: the `limit` matching rows just before the cursor row (or the end), latest first. */
async function newestFirst(store: AppStoreApi, call: CallContext, collection: string, query: RowBrowseQuery): Promise<RowBrowsePage> {
  const window: RowView[] = [];
  let found = query.after === undefined;
  await eachRow(store, call, collection, query, (row) => {
    if (row.key === query.after) {
      found = true;
      return "stop";
    }
    window.push(row);
    if (window.length > query.limit + 1) window.shift();
    return "more";
  });
  if (!found) throw cursorGone(query.after!);
  const rows = window.slice(-query.limit).reverse();
  return { rows, next: window.length > query.limit ? rows[rows.length - 1].key : null };
}

/** In the sort's order: the `limit` matching rows after the cursor row (or from the start). */
async function inSortOrder(store: AppStoreApi, call: CallContext, collection: string, query: RowBrowseQuery): Promise<RowBrowsePage> {
  const taken: RowView[] = [];
  let found = query.after === undefined;
  await eachRow(store, call, collection, query, (row) => {
    if (!found) {
      found = row.key === query.after;
      return "more";
    }
    taken.push(row);
    return taken.length > query.limit ? "stop" : "more";
  });
  if (!found) throw cursorGone(query.after!);
  const rows = taken.slice(0, query.limit);
  return { rows, next: taken.length > query.limit ? rows[rows.length - 1].key : null };
}

export function browseRows(store: AppStoreApi, call: CallContext, collection: string, query: RowBrowseQuery): Promise<RowBrowsePage> {
  return query.sort === undefined ? newestFirst(store, call, collection, query) : inSortOrder(store, call, collection, query);
}
