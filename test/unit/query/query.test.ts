// The row-query builder (durable-objects/app-store/query.ts, WIRE §2.3): what it refuses
// and with which field, that field names only ever travel as bound parameters, cursor
// encoding, parameter compaction and page cutting — and then its SQL run against a real
// AppStore's SQLite, compared with an in-memory oracle over random data and random
// conditions, and random sorts paged row by row through keyset cursors.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RelayError } from "../../../src/errors";
import { parseManifest, type CompiledCollection } from "../../../src/manifest";
import type { AppStore } from "../../../durable-objects/app-store/app-store";
import {
  afterCursorSql, compactParams, compareSql, cursorValues, encodeCursor, orderSql, PAGE_BYTES, resolveSort, takePage, whereSql,
  type Cond, type ResolvedSort, type SqlFragment,
} from "../../../durable-objects/app-store/query";

const compiled = parseManifest({
  $defs: {
    Item: {
      type: "object",
      properties: { name: { type: "string" }, qty: { type: "integer" }, price: { type: "number" }, on: { type: "boolean" }, note: { type: ["string", "null"] }, any: {} },
    },
  },
  "x-service-manifest": {
    app: { name: "Q" },
    collections: {
      items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
      loose: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
  },
});
const items = compiled.collections.items;
const loose = compiled.collections.loose;

function refusal(fn: () => unknown): { code: string; field: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RelayError);
    return { code: (err as RelayError).code, field: (err as RelayError).details?.field };
  }
  throw new Error("expected a refusal");
}

describe("whereSql refusals", () => {
  const cases: Array<[string, CompiledCollection, unknown, string]> = [
    ["not an array", items, {}, "q.where"],
    ["too many", items, Array.from({ length: 21 }, () => ({ field: "qty", op: "eq", value: 1 })), "q.where"],
    ["not an object", items, [1], "q.where.0"],
    ["unknown key", items, [{ field: "qty", op: "eq", value: 1, x: 1 }], "q.where.0"],
    ["bad field", items, [{ field: "a b", op: "eq", value: 1 }], "q.where.0.field"],
    ["undeclared field", items, [{ field: "nope", op: "eq", value: 1 }], "q.where.0.field"],
    ["bad op", items, [{ field: "qty", op: "like", value: 1 }], "q.where.0.op"],
    ["boolean order", items, [{ field: "on", op: "gt", value: true }], "q.where.0.op"],
    ["boolean order, schemaless", loose, [{ field: "x", op: "lte", value: false }], "q.where.0.op"],
    ["cross type", items, [{ field: "qty", op: "eq", value: "1" }], "q.where.0.value"],
    ["cross type in", items, [{ field: "name", op: "in", value: ["a", 1] }], "q.where.0.value"],
    ["empty in", items, [{ field: "qty", op: "in", value: [] }], "q.where.0.value"],
    ["in not array", items, [{ field: "qty", op: "notIn", value: 1 }], "q.where.0.value"],
    ["in too long", loose, [{ field: "x", op: "in", value: Array.from({ length: 101 }, (_, i) => i) }], "q.where.0.value"],
    ["null value", loose, [{ field: "x", op: "eq", value: null }], "q.where.0.value"],
    ["object value", loose, [{ field: "x", op: "eq", value: {} }], "q.where.0.value"],
    ["second condition", items, [{ field: "qty", op: "eq", value: 1 }, { field: "price", op: "eq", value: "x" }], "q.where.1.value"],
  ];
  for (const [label, collection, where, field] of cases) {
    it(label, () => expect(refusal(() => whereSql(collection, where))).toEqual({ code: "invalid_request", field }));
  }

  it("accepts an integer field compared with any number, a free field with anything scalar, and nothing at all", () => {
    expect(whereSql(items, [{ field: "qty", op: "gte", value: 1.5 }]).sql).not.toBe("1");
    expect(whereSql(items, [{ field: "any", op: "eq", value: "x" }, { field: "any", op: "eq", value: 1 }]).params.length).toBeGreaterThan(0);
    expect(whereSql(items, [{ field: "note", op: "eq", value: "x" }]).sql).not.toBe("1");
    expect(whereSql(items, undefined)).toEqual({ sql: "1", params: [] });
    expect(whereSql(items, [])).toEqual({ sql: "1", params: [] });
  });
});

describe("resolveSort and cursors", () => {
  it("refuses malformed sorts with the field named", () => {
    expect(refusal(() => resolveSort(items, {}))).toEqual({ code: "invalid_request", field: "q.sort" });
    expect(refusal(() => resolveSort(items, new Array(5).fill({ field: "qty" })))).toEqual({ code: "invalid_request", field: "q.sort" });
    expect(refusal(() => resolveSort(items, [{ field: "qty", dir: "up" }]))).toEqual({ code: "invalid_request", field: "q.sort.0.dir" });
    expect(refusal(() => resolveSort(items, [{ field: "nope" }]))).toEqual({ code: "invalid_request", field: "q.sort.0.field" });
    expect(refusal(() => resolveSort(items, [{ field: "qty", x: 1 }]))).toEqual({ code: "invalid_request", field: "q.sort.0" });
  });

  it("defaults to asc; the signature names fields and directions", () => {
    expect(resolveSort(items, [{ field: "qty" }, { field: "name", dir: "desc" }])).toEqual({
      fields: [{ field: "qty", dir: "asc" }, { field: "name", dir: "desc" }], signature: "qty:asc,name:desc",
    });
    expect(resolveSort(items, undefined)).toEqual({ fields: [], signature: "" });
  });

  it("a cursor is URL-safe, works only with its own sort, and garbage is refused", () => {
    const sort = resolveSort(loose, [{ field: "a" }, { field: "b", dir: "desc" }]);
    const cursor = encodeCursor(sort, ["x?/+é", null], 7);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(() => afterCursorSql(sort, cursor)).not.toThrow();
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), cursor))).toEqual({ code: "invalid_request", field: "since" });
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }, { field: "b" }]), cursor))).toEqual({ code: "invalid_request", field: "since" });
    const b64 = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    for (const junk of ["", "!", b64("[]"), b64("null"), b64('{"s":"a:asc","v":[{}],"r":1}'), b64('{"s":"a:asc","v":[1],"r":-1}'), b64('{"s":"a:asc","v":[1],"r":"1"}'), b64('{"s":"a:asc","v":[true],"r":1}')]) {
      expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), junk))).toEqual({ code: "invalid_request", field: "since" });
    }
  });

  it("cursorValues: booleans as 1/0, containers as JSON text, missing and null as null", () => {
    const sort = resolveSort(loose, [{ field: "a" }, { field: "b" }, { field: "c" }, { field: "d" }]);
    expect(cursorValues(sort, { a: true, b: [1, { x: 2 }], d: null })).toEqual([1, '[1,{"x":2}]', null, null]);
    expect(cursorValues(sort, "scalar")).toEqual([null, null, null, null]);
  });
});

describe("field names stay out of the SQL text", () => {
  it("every builder binds `$.field` as a parameter", () => {
    const field = "zz_secret_field";
    const fragments: SqlFragment[] = [
      ...(["eq", "neq", "gt", "lt", "gte", "lte"] as const).map((op) => compareSql(field, op, 1)),
      compareSql(field, "in", [1, "a", true]), compareSql(field, "notIn", ["x"]), compareSql(field, "eq", false),
      orderSql(resolveSort(loose, [{ field }])),
      afterCursorSql(resolveSort(loose, [{ field }]), encodeCursor(resolveSort(loose, [{ field }]), [3], 1)),
    ];
    for (const f of fragments) {
      expect(f.sql).not.toContain(field);
      expect(f.sql.split("?").length - 1).toBe(f.params.length);
      expect(f.params).toContain(`$.${field}`);
    }
  });

  it("an in/notIn list is one bound JSON array, however long", () => {
    const values = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const f = compareSql("x", "in", values);
    expect(f.params).toContain(JSON.stringify(values));
    expect(f.params.length).toBeLessThan(10);
  });
});

describe("compactParams", () => {
  it("binds each distinct value once, by number, keeping types apart", () => {
    const out = compactParams({ sql: "a = ? AND b = ? AND c = ? AND d = ? AND e = ? AND f = ?", params: ["$.x", 1, "$.x", "1", 1, null] });
    expect(out).toEqual({ sql: "a = ?1 AND b = ?2 AND c = ?1 AND d = ?3 AND e = ?2 AND f = ?4", params: ["$.x", 1, "1", null] });
  });

  it("keeps a 20-condition query far under the store's 100-parameter cap", () => {
    const where = whereSql(loose, Array.from({ length: 20 }, (_, i) => ({ field: `f${i}`, op: i % 2 ? "notIn" : "gte", value: i % 2 ? Array.from({ length: 100 }, (_, j) => j) : i })));
    const sort = resolveSort(loose, [{ field: "f0" }, { field: "f1", dir: "desc" }, { field: "f2" }, { field: "f3" }]);
    const after = afterCursorSql(sort, encodeCursor(sort, [1, "b", null, 4], 9));
    const all = compactParams({ sql: `${where.sql} AND ${after.sql} ORDER BY ${orderSql(sort).sql}`, params: [...where.params, ...after.params, ...orderSql(sort).params] });
    expect(all.params.length).toBeLessThan(100);
  });

  it("refuses a fragment whose placeholders and parameters disagree", () => {
    expect(() => compactParams({ sql: "a = ? AND b = ?", params: [1] })).toThrow();
  });
});

describe("takePage", () => {
  it("stops at the limit, or at PAGE_BYTES (never before the first item), and says whether more remain", () => {
    const items = (sizes: number[]) => sizes.map((size, i) => ({ i, size }));
    const size = (x: { size: number }) => x.size;
    expect(takePage(items([1, 1, 1]), 2, size)).toEqual({ page: items([1, 1]), more: true });
    expect(takePage(items([1, 1]), 2, size)).toEqual({ page: items([1, 1]), more: false });
    expect(takePage(items([]), 2, size)).toEqual({ page: [], more: false });
    expect(takePage(items([PAGE_BYTES * 2, 1]), 10, size)).toEqual({ page: items([PAGE_BYTES * 2]), more: true });
    const half = PAGE_BYTES / 2;
    expect(takePage(items([half, half, 1]), 10, size).page).toHaveLength(2);
    expect(takePage(items([half, half + 1]), 10, size)).toEqual({ page: items([half]), more: true });
  });

  it("reads its cursor lazily", () => {
    let pulled = 0;
    function* source() {
      for (let i = 0; i < 1000; i++) {
        pulled += 1;
        yield i;
      }
    }
    expect(takePage(source(), 3, () => 1).page).toEqual([0, 1, 2]);
    expect(pulled).toBe(4);
  });
});

// ---- the SQL against a real store ----

/** A small deterministic PRNG so failures replay. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Val = string | number | boolean | null | undefined | unknown[] | Record<string, unknown>;
const POOL: Val[] = [undefined, null, 0, 1, 2, 2.5, -1, 10, "", "a", "b", "B", "ab", "2", "10", true, false, [1], { a: 1 }];
const SCALARS = [0, 1, 2, 2.5, -1, 10, "", "a", "b", "B", "ab", "2", "10", true, false];
const FIELDS = ["f", "g", "h"];

function kind(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return "num";
  if (typeof v === "string") return "str";
  return "other";
}

/** WIRE §2.3 in memory: no cross-type match, missing/null match nothing, booleans never order. */
function oracle(row: Record<string, unknown>, c: Cond): boolean {
  const v = row[c.field];
  const eq = (x: unknown) => kind(v) === kind(x) && v === x;
  switch (c.op) {
    case "eq": return eq(c.value);
    case "neq": return kind(v) !== null && !eq(c.value);
    case "in": return (c.value as unknown[]).some(eq);
    case "notIn": return kind(v) !== null && !(c.value as unknown[]).some(eq);
    default: {
      if (typeof c.value === "boolean" || kind(v) !== kind(c.value) || (kind(v) !== "num" && kind(v) !== "str")) return false;
      const a = v as number | string;
      const b = c.value as number | string;
      return c.op === "gt" ? a > b : c.op === "lt" ? a < b : c.op === "gte" ? a >= b : a <= b;
    }
  }
}

async function withRows<T>(name: string, rows: Array<Record<string, unknown>>, fn: (sql: SqlStorage, collection: string) => T): Promise<T> {
  const stub = env.APP_STORE.get(env.APP_STORE.idFromName(`unit-query:${name}`));
  return runInDurableObject(stub, (_: AppStore, state) => {
    const sql = state.storage.sql;
    const collection = `q_${name}`;
    sql.exec("DELETE FROM _svc_rows WHERE collection = ?", collection);
    rows.forEach((data, i) => {
      const text = JSON.stringify(data);
      sql.exec(
        `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
         VALUES (?, ?, ?, 1, ?, 'system', 's', 'system', 's', 'now', 'now')`, collection, `k${i}`, text, text.length,
      );
    });
    return fn(sql, collection);
  });
}

function select(sql: SqlStorage, collection: string, parts: SqlFragment[], order: SqlFragment, limit = 100_000): Array<{ key: string; data: string; rid: number }> {
  const q = compactParams({
    sql: `SELECT key, data, rid FROM _svc_rows WHERE collection = ? AND ${parts.map((p) => `(${p.sql})`).join(" AND ") || "1"} ORDER BY ${order.sql} LIMIT ?`,
    params: [collection, ...parts.flatMap((p) => p.params), ...order.params, limit],
  });
  return sql.exec<{ key: string; data: string; rid: number }>(q.sql, ...q.params).toArray();
}

function randomRows(rand: () => number, n: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, () => {
    const row: Record<string, unknown> = {};
    for (const f of FIELDS) {
      const v = POOL[Math.floor(rand() * POOL.length)];
      if (v !== undefined) row[f] = v;
    }
    return row;
  });
}

describe("the SQL on a real store", () => {
  it("random conditions over random rows match the oracle exactly", async () => {
    const rand = prng(20240611);
    const rows = randomRows(rand, 120);
    const ops = ["eq", "neq", "in", "notIn", "gt", "lt", "gte", "lte"] as const;
    const conds: Cond[][] = [];
    for (let i = 0; i < 400; i++) {
      const n = 1 + Math.floor(rand() * 3);
      conds.push(Array.from({ length: n }, () => {
        const op = ops[Math.floor(rand() * ops.length)];
        const pick = () => SCALARS[Math.floor(rand() * SCALARS.length)];
        let value: Cond["value"] = op === "in" || op === "notIn" ? Array.from({ length: 1 + Math.floor(rand() * 4) }, pick) : pick();
        if (typeof value === "boolean" && ["gt", "lt", "gte", "lte"].includes(op)) value = 1;
        return { field: FIELDS[Math.floor(rand() * FIELDS.length)], op, value };
      }));
    }
    const mismatches = await withRows("where", rows, (sql, collection) => {
      const out: string[] = [];
      for (const where of conds) {
        const got = select(sql, collection, [whereSql(loose, where)], orderSql(resolveSort(loose, undefined))).map((r) => r.key);
        const want = rows.flatMap((row, i) => (where.every((c) => oracle(row, c)) ? [`k${i}`] : []));
        if (JSON.stringify(got) !== JSON.stringify(want)) out.push(`${JSON.stringify(where)}: got ${got.length}, want ${want.length}`);
      }
      return out;
    });
    expect(mismatches).toEqual([]);
  });

  it("random sorts paged one row at a time through cursors give the one-shot order, every row once", async () => {
    const rand = prng(77);
    const rows = randomRows(rand, 60);
    const sorts: ResolvedSort[] = [];
    for (let i = 0; i < 25; i++) {
      const n = 1 + Math.floor(rand() * 3);
      const fields = [...FIELDS].sort(() => rand() - 0.5).slice(0, n);
      sorts.push(resolveSort(loose, fields.map((field) => ({ field, dir: rand() < 0.5 ? "asc" : "desc" }))));
    }
    const failures = await withRows("sort", rows, (sql, collection) => {
      const out: string[] = [];
      for (const sort of sorts) {
        const order = orderSql(sort);
        const whole = select(sql, collection, [], order).map((r) => r.key);
        const paged: string[] = [];
        let cursor: string | null = null;
        for (let guard = 0; guard < 200; guard++) {
          const parts = cursor ? [afterCursorSql(sort, cursor)] : [];
          const page = select(sql, collection, parts, order, 1);
          if (page.length === 0) break;
          paged.push(page[0].key);
          cursor = encodeCursor(sort, cursorValues(sort, JSON.parse(page[0].data)), page[0].rid);
        }
        if (JSON.stringify(paged) !== JSON.stringify(whole) || whole.length !== rows.length) out.push(`${sort.signature}: ${paged.length} paged vs ${whole.length}`);
      }
      return out;
    });
    expect(failures).toEqual([]);
  });

  it("asc puts missing and null first, desc last, ties by insertion", async () => {
    const rows = [{ f: 2 }, {}, { f: 1 }, { f: null }, { f: 2 }, { f: "a" }];
    const keys = await withRows("nulls", rows, (sql, collection) => ({
      asc: select(sql, collection, [], orderSql(resolveSort(loose, [{ field: "f" }]))).map((r) => r.key),
      desc: select(sql, collection, [], orderSql(resolveSort(loose, [{ field: "f", dir: "desc" }]))).map((r) => r.key),
    }));
    expect(keys).toEqual({ asc: ["k1", "k3", "k2", "k0", "k4", "k5"], desc: ["k5", "k0", "k4", "k2", "k1", "k3"] });
  });
});
