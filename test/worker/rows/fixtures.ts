// Shared material for the data-plane tests: one manifest with a collection per behaviour
// (unique, keyClaim, serverSet, immutable, appendOnly, document storage, read hiding…),
// an app deployed by a claimed agent whose human can also call the API with a session,
// short-hands for each row route, and a snapshot of everything the app's AppStore holds
// (rows, unique slots, feed, budgets, meta) so a failed request can be shown to have
// changed nothing at all.
import { env, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { AppStore, FeedEntry as StoreFeedEntry } from "../../../durable-objects/app-store/contract";
import type { BatchResult } from "../../../src/apps/store-call";
import { call, claimedAgent, json, signIn, type CallOptions, type Registered, type SignedIn } from "../helpers";

type Obj = Record<string, unknown>;

export const TASK = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 200 },
    n: { type: "integer" },
    score: { type: "number" },
    email: { type: "string", maxLength: 200 },
    handle: { type: "string", maxLength: 200 },
    done: { type: "boolean" },
    due: { type: "string", maxLength: 40 },
    tags: { type: "array", items: { type: "string", maxLength: 20 }, maxItems: 5 },
    note: { type: ["string", "null"], maxLength: 200 },
    meta: { type: "object", properties: { level: { type: "integer", minimum: 0 } } },
  },
  required: ["title"],
  additionalProperties: false,
};

const PRODUCT = { type: "object", properties: { name: { type: "string", maxLength: 100 }, price: { type: "number" } }, required: ["name"], additionalProperties: false };
const LINE = {
  type: "object",
  properties: {
    product: { type: "string", maxLength: 128 }, qty: { type: "integer" }, unitPrice: { type: "number" },
    total: { type: "number" }, fee: { type: "number" }, sum: { type: "number" }, label: { type: "string", maxLength: 50 },
  },
  additionalProperties: false,
};
const ITEM = { type: "object", properties: { sku: { type: "string", maxLength: 40 }, label: { type: "string", maxLength: 40 } }, additionalProperties: false };

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };

/** Every collection the data-plane tests use. */
export const COLLECTIONS: Record<string, Obj> = {
  // A schema, two unique fields and countRead: most verbs run here.
  tasks: { schema: { $ref: "#/$defs/Task" }, ...owned, countRead: ["owner"], unique: ["email", "handle"] },
  // No schema: any JSON value, mixed types in one field.
  free: { ...owned, countRead: ["owner"], unique: ["code"] },
  logs: { ...owned, appendOnly: true },
  logsx: { ...owned, appendOnly: { except: ["owner"] } },
  mine: { ...owned, keyClaim: "caller" },
  minted: { ...owned, keyClaim: "server" },
  products: { schema: { $ref: "#/$defs/Product" }, ...owned },
  lines: {
    schema: { $ref: "#/$defs/Line" }, ...owned,
    serverSet: { unitPrice: { from: "products", keyField: "product", take: "price" }, total: { product: ["qty", "unitPrice"] }, sum: { sum: ["qty", "fee"] } },
  },
  items: { schema: { $ref: "#/$defs/Item" }, ...owned, immutable: ["sku"] },
  docs: { ...owned, storage: "document" },
  // Read hiding: each principal reads only the rows it created.
  private: { read: ["creator"], write: ["owner"], update: ["creator"], delete: ["creator"], unique: ["email"] },
  // Readable by both, but only the creator may update or delete.
  shared: { read: ["owner"], write: ["owner"], update: ["creator"], delete: ["creator"], countRead: ["owner"] },
  // Nobody reads.
  sealed: { read: [], write: ["owner"], delete: ["owner"] },
  // A retention default from the manifest.
  kept: { ...owned, retention: { maxRows: 50, maxAgeDays: 7 } },
};

export function manifestOf(collections: Record<string, Obj> = COLLECTIONS): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Task: TASK, Product: PRODUCT, Line: LINE, Item: ITEM },
    "x-service-manifest": { app: { name: "Data plane" }, collections },
  };
}

export const MANIFEST = manifestOf();

export interface Row {
  key: string;
  data: any;
  version: number;
  author: { kind: string; id: string };
  creator: { kind: string; id: string };
  editor: { kind: string; id: string };
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface DeletedRow {
  key: string;
  data: any;
  version: number;
  author: { kind: string; id: string } | null;
  creator: { kind: string; id: string };
  created_at: string;
  deleted_at: string;
  recoverable_until: string;
  purged: boolean;
}

/** A batch answer (WIRE §2.3), as the store returns it. */
export type Batch = BatchResult;

/** A feed entry as the store answers it, its data loosely typed for assertions. */
export type FeedEntry = Omit<StoreFeedEntry, "data"> & { data: any };

export interface FeedPage {
  entries: FeedEntry[];
  cursor: number;
  truncated: boolean;
}

export interface Page {
  rows: Row[];
  next_cursor: string | null;
  has_more: boolean;
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const ROW_KEYS = ["author", "created_at", "creator", "data", "deleted_at", "editor", "key", "updated_at", "version"];
export const DELETED_KEYS = ["author", "created_at", "creator", "data", "deleted_at", "key", "purged", "recoverable_until", "version"];
export const FEED_KEYS = ["author", "collection_name", "data", "op", "row_key", "row_version", "seq", "ts"];

/** An app deployed by a claimed agent; its human can call the same routes with a session. */
export class Ctx {
  constructor(
    readonly human: SignedIn,
    readonly agent: Registered,
    readonly appId: string,
  ) {}

  get key(): string {
    return this.agent.api_key;
  }

  get agentAuthor() {
    return { kind: "agent", id: this.agent.agent_id };
  }

  get humanAuthor() {
    return { kind: "human", id: this.human.humanId };
  }

  /** `/v1/apps/:id/collections/:name` plus `rest`. */
  path(collection: string, rest = ""): string {
    return `/v1/apps/${this.appId}/collections/${collection}${rest}`;
  }

  feedPath(query: string): string {
    return `/v1/apps/${this.appId}/feed?${query}`;
  }

  /** As the agent (API key). */
  agentCall(path: string, opts: CallOptions = {}): Promise<Response> {
    return call(path, { key: this.key, ...opts });
  }

  /** As the owner (session cookie + Origin). */
  ownerCall(path: string, opts: CallOptions = {}): Promise<Response> {
    return call(path, { session: this.human.session, ...opts });
  }

  as(who: "agent" | "owner"): (path: string, opts?: CallOptions) => Promise<Response> {
    return who === "agent" ? (p, o) => this.agentCall(p, o) : (p, o) => this.ownerCall(p, o);
  }

  async create(collection: string, data: unknown, extra: Obj = {}, who: "agent" | "owner" = "agent"): Promise<Row> {
    const res = await this.as(who)(this.path(collection), { json: { data, ...extra } });
    return (await json<{ row: Row }>(res, 201)).row;
  }

  async get(collection: string, key: string, who: "agent" | "owner" = "agent"): Promise<Row> {
    return (await json<{ row: Row }>(await this.as(who)(this.path(collection, `/${encodeURIComponent(key)}`)), 200)).row;
  }

  async update(collection: string, key: string, data: unknown, extra: Obj = {}, who: "agent" | "owner" = "agent"): Promise<Row> {
    const res = await this.as(who)(this.path(collection, `/${encodeURIComponent(key)}`), { method: "PATCH", json: { data, ...extra } });
    return (await json<{ row: Row }>(res, 200)).row;
  }

  async remove(collection: string, key: string, who: "agent" | "owner" = "agent"): Promise<void> {
    const res = await this.as(who)(this.path(collection, `/${encodeURIComponent(key)}`), { method: "DELETE" });
    expect(await json(res, 200)).toEqual({ deleted: true, key });
  }

  async list(collection: string, query: { q?: unknown; since?: string | null; limit?: number } = {}, who: "agent" | "owner" = "agent"): Promise<Page> {
    return json<Page>(await this.as(who)(this.path(collection, listQuery(query))), 200);
  }

  /** POST …/batch: many creates, one result per row. */
  batchCreate(collection: string, body: unknown, who: "agent" | "owner" = "agent"): Promise<Response> {
    return this.as(who)(this.path(collection, "/batch"), { json: body });
  }

  /** DELETE …/batch: many soft deletes, one result per key. */
  batchDelete(collection: string, body: unknown): Promise<Response> {
    return this.agentCall(this.path(collection, "/batch"), { method: "DELETE", json: body });
  }

  /** Every row through the cursor, `limit` per page. */
  async listAll(collection: string, q?: unknown, limit = 1000, who: "agent" | "owner" = "agent"): Promise<Row[]> {
    const out: Row[] = [];
    let since: string | null = null;
    for (let i = 0; i < 10_000; i++) {
      const page = await this.list(collection, { q, since, limit }, who);
      out.push(...page.rows);
      if (!page.has_more) return out;
      since = page.next_cursor;
    }
    throw new Error("listAll did not end");
  }

  async feed(query: string, who: "agent" | "owner" = "agent"): Promise<FeedPage> {
    return json<FeedPage>(await this.as(who)(this.feedPath(query)), 200);
  }

  /** Every feed entry from the start. */
  async feedAll(who: "agent" | "owner" = "agent"): Promise<FeedEntry[]> {
    const out: FeedEntry[] = [];
    let since = 0;
    for (;;) {
      const page = await this.feed(`since=${since}&limit=1000`, who);
      out.push(...page.entries);
      since = page.cursor;
      if (!page.truncated) return out;
    }
  }

  stub(): DurableObjectStub<AppStore> {
    return env.APP_STORE.get(env.APP_STORE.idFromName(this.appId)) as DurableObjectStub<AppStore>;
  }

  /** Runs `fn` on the app's SQLite inside its Durable Object. */
  sql<T>(fn: (sql: SqlStorage, instance: AppStore, state: DurableObjectState) => T | Promise<T>): Promise<T> {
    return runInDurableObject(this.stub(), (instance: AppStore, state) => fn(state.storage.sql, instance, state));
  }

  /** Everything the AppStore holds. */
  snapshot(): Promise<Obj> {
    return this.sql((sql) => {
      const all = (q: string) => sql.exec(q).toArray();
      return {
        rows: all("SELECT * FROM _svc_rows ORDER BY rid"),
        unique: all("SELECT * FROM _svc_unique ORDER BY collection, field, value"),
        feed: all("SELECT * FROM _svc_feed ORDER BY seq"),
        seq: all("SELECT * FROM sqlite_sequence ORDER BY name"),
        budget: all("SELECT * FROM _svc_anon_budget ORDER BY collection, scope, subject, day"),
        outbox: all("SELECT * FROM _svc_outbox ORDER BY id"),
        usage: all("SELECT * FROM _svc_usage"),
        // Bookkeeping the store writes when it loads a manifest version is not row state.
        meta: all("SELECT * FROM _svc_meta WHERE key NOT IN ('app_id', 'live_version', 'unique_fields', 'unique_format') ORDER BY key"),
      };
    });
  }

  /** Runs `fail` (which asserts its own error) and proves the store is exactly as before. */
  async unchanged<T>(fail: () => Promise<T>): Promise<T> {
    const before = await this.snapshot();
    const out = await fail();
    expect(await this.snapshot()).toEqual(before);
    return out;
  }

  /** Sets a column of stored rows directly (to age rows or fake usage). */
  async setColumn(collection: string, key: string, column: "created_at" | "deleted_at" | "bytes" | "updated_at", value: unknown): Promise<void> {
    await this.sql((sql) => {
      sql.exec(`UPDATE _svc_rows SET ${column} = ? WHERE collection = ? AND key = ?`, value, collection, key);
    });
  }

  async storedCount(where = "1 = 1"): Promise<number> {
    return this.sql((sql) => Number(sql.exec<{ n: number }>(`SELECT count(*) AS n FROM _svc_rows WHERE ${where}`).one().n));
  }

  async feedHead(): Promise<number> {
    return this.sql((sql) => Number(sql.exec<{ n: number }>("SELECT COALESCE(max(seq), 0) AS n FROM _svc_feed").one().n));
  }
}

export function listQuery(query: { q?: unknown; since?: string | null; limit?: number | string }): string {
  const params = new URLSearchParams();
  if (query.q !== undefined) params.set("q", typeof query.q === "string" ? query.q : JSON.stringify(query.q));
  if (query.since) params.set("since", query.since);
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** A signed-in human, a claimed agent, and an app deployed with `manifest`. */
export async function setup(manifest: Obj = MANIFEST): Promise<Ctx> {
  const human = await signIn();
  const agent = await claimedAgent(human);
  const created = await json<{ app_id: string }>(await call("/v1/apps", { key: agent.api_key, json: { html: "<p>rows</p>", manifest } }), 201);
  return new Ctx(human, agent, created.app_id);
}

/** Inserts `n` live rows straight into the store (for quota-sized fixtures). */
export async function seedRows(ctx: Ctx, collection: string, n: number, data: (i: number) => unknown = (i) => ({ i })): Promise<void> {
  await ctx.sql((sql) => {
    const now = new Date().toISOString();
    for (let i = 0; i < n; i++) {
      const text = JSON.stringify(data(i));
      sql.exec(
        `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
         VALUES (?, ?, ?, 1, ?, 'agent', ?, 'agent', ?, ?, ?)`,
        collection, `seed-${collection}-${i}`, text, new TextEncoder().encode(text).byteLength, ctx.agent.agent_id, ctx.agent.agent_id, now, now,
      );
    }
  });
}

export function days(n: number): number {
  return n * 86_400_000;
}
