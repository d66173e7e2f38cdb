/**
 * The page's data: the local mirror of every declared collection (except `mirror:
 * "server"` ones), the `collections` and `feed` members built on it, and the calls to the
 * same-origin data endpoints (`/_svc/c/...`, `/_svc/count/...`). Rows are kept in the
 * page shape (camelCase, WIRE §4.2).
 *
 * Consistency: a snapshot is taken only after the feed socket said hello, so the cursor
 * the socket resumes from is never newer than the snapshot (entries arriving meanwhile
 * wait in a queue and are applied after it). Feed entries are applied in seq order, each
 * once. A row is only ever replaced by a higher version; rows from the page's own write
 * responses also defer to a delete the feed already reported. When there is no cursor
 * yet (the socket was late) the snapshot is taken anyway and retaken once it arrives.
 */
import { CHALLENGE_HEADER, credentialHeaders } from "./common";
import type { Author, CollectionEvent, ListOptions, ListPage, PageFeedEntry, Row, ServiceCollections, ServiceFeed } from "./types";

export interface WireRow {
  key: string;
  data: unknown;
  version: number;
  author: Author;
  created_at: string;
  updated_at: string;
}

export interface WireEntry {
  seq: number;
  op: "create" | "update" | "delete";
  collection_name: string;
  row_key: string;
  row_version?: number | null;
  data: unknown;
  author: Author;
  ts: string;
}

export interface DeclaredCollection {
  name: string;
  appendOnly: boolean;
  mirror: "auto" | "eager" | "server";
}

/** An Error with the relay's `code` (and `details`, `status`, `hint` when it sent them). */
export type ServiceError = Error & { code: string; details?: unknown; status?: number; hint?: string };

/** `auto` collections are mirrored up to this many rows, then read from the server only. */
const AUTO_MIRROR_CAP = 5000;
const PAGE = 1000;

export function failure(code: string, message: string, extra: { details?: unknown; status?: number; hint?: string } = {}): ServiceError {
  const err = new Error(message) as ServiceError;
  err.name = "ServiceError";
  err.code = code;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (err as unknown as Record<string, unknown>)[k] = v;
  return err;
}

export const toRow = (w: WireRow): Row => ({ key: w.key, data: w.data, version: w.version, author: w.author, createdAt: w.created_at, updatedAt: w.updated_at });

const isWireRow = (v: unknown): v is WireRow => typeof v === "object" && v !== null && typeof (v as WireRow).key === "string";

/**
 * One request to a same-origin `/_svc/` endpoint with the page's credentials; a network
 * failure rejects with `fetch_error`. A FormData body goes as multipart, anything else as JSON.
 */
export async function send(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
  const headers = { ...credentialHeaders(), ...extra };
  const form = typeof FormData !== "undefined" && body instanceof FormData;
  if (body !== undefined && !form) headers["content-type"] = "application/json";
  try {
    return await fetch(path, { method, headers, body: body === undefined ? undefined : form ? body : JSON.stringify(body), credentials: "omit", cache: "no-store" });
  } catch (err) {
    throw failure("fetch_error", `Could not reach the relay: ${(err as Error).message}`, { status: 0 });
  }
}

/** The rejection for a non-2xx answer whose body was `text`: its envelope's code. */
export function refusal(res: Response, text: string): Error {
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not an envelope: relay_error with the status below.
  }
  const e = ((json as { error?: Record<string, unknown> } | null)?.error ?? {}) as { code?: string; message?: string; details?: Record<string, unknown>; hint?: string };
  let details: unknown = e.details;
  // A conflict's current row comes back in the page shape, like every other row.
  if (e.details && isWireRow(e.details.current)) details = { ...e.details, current: toRow(e.details.current) };
  return failure(e.code ?? "relay_error", e.message ?? `relay returned ${res.status}`, { details, status: res.status, hint: e.hint });
}

/** One call to a same-origin `/_svc/` endpoint; a non-2xx answer rejects with its envelope's code. */
export async function api<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
  const res = await send(method, path, body, extra);
  const text = await res.text();
  if (!res.ok) throw refusal(res, text);
  try {
    return (text ? JSON.parse(text) : null) as T;
  } catch {
    throw failure("non_json_response", "The relay answered something that is not JSON.", { status: res.status, details: { body: text.slice(0, 500) } });
  }
}

type Handler<E> = (event: E) => void;

function dispatch<E>(handlers: Iterable<Handler<E>> | undefined, event: E): void {
  for (const handler of handlers ?? []) {
    try {
      handler(event);
    } catch (err) {
      console.error("service: a data handler threw", err);
    }
  }
}

const path = (name: string) => `/_svc/c/${encodeURIComponent(name)}`;

export class Store {
  /** Mirrored, readable collections: key → row. */
  private readonly rows = new Map<string, Map<string, Row>>();
  /** Deletes the feed reported, by collection and key: a write response at or below that version is stale. */
  private readonly gone = new Map<string, Map<string, number>>();
  private readonly handlers = new Map<string, Set<Handler<CollectionEvent>>>();
  private readonly feedHandlers = new Set<Handler<PageFeedEntry>>();
  private declared: DeclaredCollection[] = [];
  /** The highest seq applied; null until the socket's first hello. */
  cursor: number | null = null;
  private queue: WireEntry[] | null = null;
  private syncing: Promise<void> | null = null;
  private again = false;
  private synced = false;
  private loaded = false;

  /**
   * `challenge` answers, once the viewer is known, a bot-challenge token for a create or
   * upsert on that collection, or null when none is needed or none could be had.
   */
  constructor(
    private readonly credentials: Promise<void>,
    private readonly challenge: (collection: string) => Promise<string | null> = async () => null,
  ) {}

  declare(collections: DeclaredCollection[]): void {
    this.declared = collections;
  }

  // ---- the feed ----

  /** The socket's hello: the first one fixes the cursor; a snapshot taken without one is retaken. */
  hello(seq: number): void {
    if (this.cursor === null) this.cursor = seq;
    if (this.loaded && !this.synced) void this.sync();
  }

  advance(cursor: number): void {
    if (typeof cursor === "number" && (this.cursor === null || cursor > this.cursor)) this.cursor = cursor;
  }

  entries(list: WireEntry[]): void {
    for (const entry of list) {
      if (!entry || typeof entry.seq !== "number" || (this.cursor !== null && entry.seq <= this.cursor)) continue;
      this.cursor = entry.seq;
      dispatch(this.feedHandlers, {
        seq: entry.seq, op: entry.op, collection: entry.collection_name, key: entry.row_key, data: entry.data, author: entry.author, ts: entry.ts,
      });
      if (this.queue) this.queue.push(entry);
      else this.apply(entry);
    }
  }

  private emit(event: CollectionEvent): void {
    dispatch(this.handlers.get(event.collection), event);
  }

  private apply(e: WireEntry): void {
    const name = e.collection_name;
    const rows = this.rows.get(name);
    if (e.op === "delete") {
      this.forget(name, e.row_key, e.row_version ?? Number.MAX_SAFE_INTEGER);
      const had = rows ? rows.delete(e.row_key) : false;
      if (had || !rows) this.emit({ kind: "delete", collection: name, row: { key: e.row_key, deletedAt: e.ts } });
      return;
    }
    const prev = rows?.get(e.row_key);
    const version = e.row_version ?? (prev ? prev.version + 1 : 1);
    this.gone.get(name)?.delete(e.row_key);
    if (prev && prev.version >= version) return;
    const row: Row = { key: e.row_key, data: e.data, version, author: e.author, createdAt: e.op === "create" || !prev ? e.ts : prev.createdAt, updatedAt: e.ts };
    rows?.set(row.key, row);
    this.emit({ kind: "upsert", collection: name, row });
  }

  private forget(name: string, key: string, version: number): void {
    let keys = this.gone.get(name);
    if (!keys) this.gone.set(name, (keys = new Map()));
    keys.set(key, version);
  }

  /** A row the page's own write returned: into the mirror unless something newer is known. */
  private settle(name: string, row: Row): Row {
    const rows = this.rows.get(name);
    const prev = rows?.get(row.key);
    const deleted = this.gone.get(name)?.get(row.key);
    if (rows && !(prev && prev.version >= row.version) && !(deleted !== undefined && deleted >= row.version)) {
      rows.set(row.key, row);
      this.emit({ kind: "upsert", collection: name, row });
    }
    return row;
  }

  // ---- snapshots ----

  /** (Re)takes the snapshot of every mirrored collection; a call while one runs makes it run again. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        this.queue ??= [];
        const basis = this.cursor !== null;
        await this.load();
        this.synced = basis;
        const queued = this.queue ?? [];
        this.queue = null;
        for (const entry of queued) this.apply(entry);
        this.loaded = true;
      } while (this.again || (!this.synced && this.cursor !== null));
    })().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async load(): Promise<void> {
    const initial = !this.loaded;
    await Promise.all(this.declared.filter((c) => c.mirror !== "server").map(async (c) => {
      const rows: Row[] = [];
      try {
        let since: string | null = null;
        for (;;) {
          const page: { rows: WireRow[]; next_cursor: string | null; has_more: boolean } =
            await api("GET", `${path(c.name)}?limit=${PAGE}${since ? `&since=${encodeURIComponent(since)}` : ""}`);
          rows.push(...page.rows.map(toRow));
          since = page.next_cursor;
          if (!page.has_more) break;
          if (c.mirror === "auto" && rows.length > AUTO_MIRROR_CAP) {
            console.warn(`service: "${c.name}" holds more than ${AUTO_MIRROR_CAP} rows, so it is not mirrored; read it with collections.list().`);
            this.rows.delete(c.name);
            return;
          }
        }
      } catch (err) {
        // Not readable by this viewer: nothing to mirror. Anything else keeps what the mirror had.
        if ((err as ServiceError).code === "collection_read_forbidden") this.rows.delete(c.name);
        else console.warn(`service: could not load "${c.name}"`, err);
        return;
      }
      const before = this.rows.get(c.name);
      const after = new Map(rows.map((r) => [r.key, r]));
      this.rows.set(c.name, after);
      if (initial || !before) return;
      for (const [key, row] of after) {
        const old = before.get(key);
        if (!old || old.version !== row.version) this.emit({ kind: "upsert", collection: c.name, row });
      }
      const now = new Date().toISOString();
      for (const key of before.keys()) if (!after.has(key)) this.emit({ kind: "delete", collection: c.name, row: { key, deletedAt: now } });
    }));
  }

  // ---- the public members ----

  private async call<T>(method: string, p: string, body?: unknown): Promise<T> {
    await this.credentials;
    return api<T>(method, p, body);
  }

  /** A create or upsert, with a fresh bot-challenge token when this viewer needs one there. */
  private async post(name: string, body: unknown): Promise<{ row: WireRow }> {
    await this.credentials;
    const token = await this.challenge(name);
    return api<{ row: WireRow }>("POST", path(name), body, token ? { [CHALLENGE_HEADER]: token } : {});
  }

  collections(): ServiceCollections {
    const named = (name: unknown): string => {
      if (typeof name !== "string" || name === "") throw failure("invalid_args", "Name the collection first: service.collections.<method>(name, ...).");
      return name;
    };
    const rowOf = async (name: string, promise: Promise<{ row: WireRow }>) => this.settle(name, toRow((await promise).row));
    return {
      snapshot: (name) => [...(this.rows.get(name)?.values() ?? [])],
      get: (name, key) => this.rows.get(name)?.get(key),
      count: async (name) => (await this.call<{ count: number }>("GET", `/_svc/count/${encodeURIComponent(named(name))}`)).count,
      list: async (name, options: ListOptions = {}) => {
        const params = new URLSearchParams();
        if (options.limit !== undefined) params.set("limit", String(options.limit));
        if (options.since) params.set("since", options.since);
        const q: Record<string, unknown> = {};
        if (options.where?.length) q.where = options.where;
        if (options.sort?.length) q.sort = options.sort;
        if (Object.keys(q).length) params.set("q", JSON.stringify(q));
        const query = params.toString();
        const page = await this.call<{ rows: WireRow[]; next_cursor: string | null; has_more: boolean }>("GET", `${path(named(name))}${query ? `?${query}` : ""}`);
        return { rows: page.rows.map(toRow), next_cursor: page.next_cursor, has_more: page.has_more } satisfies ListPage;
      },
      on: (name, handler) => {
        let set = this.handlers.get(name);
        if (!set) this.handlers.set(name, (set = new Set()));
        const own = (e: CollectionEvent) => handler(e);
        set.add(own);
        return () => {
          set!.delete(own);
        };
      },
      create: async (name, data) => rowOf(named(name), this.post(name, { data })),
      upsert: async (name, key, data) => rowOf(named(name), this.post(name, { data, key })),
      update: async (name, key, data, options = {}) =>
        rowOf(named(name), this.call("PATCH", `${path(name)}/${encodeURIComponent(key)}`, { data, ...(options.ifMatch !== undefined ? { if_match: options.ifMatch } : {}) })),
      delete: async (name, key, options = {}) => {
        await this.call("DELETE", `${path(named(name))}/${encodeURIComponent(key)}`, options.ifMatch !== undefined ? { if_match: options.ifMatch } : undefined);
        const prev = this.rows.get(name)?.get(key);
        if (prev) {
          this.forget(name, key, prev.version);
          this.rows.get(name)!.delete(key);
          this.emit({ kind: "delete", collection: name, row: { key, deletedAt: new Date().toISOString() } });
        }
      },
    };
  }

  feed(): ServiceFeed {
    const store = this;
    return {
      get cursor() {
        return store.cursor ?? 0;
      },
      on: (handler, options = {}) => {
        const own = (e: PageFeedEntry) => {
          if (!options.collection || e.collection === options.collection) handler(e);
        };
        this.feedHandlers.add(own);
        return () => {
          this.feedHandlers.delete(own);
        };
      },
    };
  }
}
