// The row-query builder (durable-objects/app-store/query.ts, WIRE §2.3): what it refuses
// and with which field, that field names and values never enter the SQL text, cursor
// encoding and binding, the one-parameter compaction and page cutting — and then its SQL
// run against a real AppStore's SQLite: every operator on rows of every JSON type must
// match exactly the rows the in-memory evaluator (`matchesCond`, used by get and the feed
// socket) accepts, random conditions over random data too, the largest query the limits
// allow must run, and random sorts paged row by row through keyset cursors.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RelayError } from "../../../src/errors";
import { parseManifest, type CompiledCollection } from "../../../src/manifest";
import { compareCodePoints, matchesCond } from "../../../src/permissions/filters";
import type { AppStore } from "../app-store";
import {
  afterCursorSql, compactParams, compareSql, cursorValues, encodeCursor, orderSql, PAGE_BYTES, resolveSort, takePage, whereSql,
  type Cond, type ResolvedSort, type SqlFragment,
  filterSql,
} from "../query";
import type { RowTerm } from "../../../src/permissions/filters";

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

  it("defaults to asc; the signature names fields and directions; the collection and app come along", () => {
    expect(resolveSort(items, [{ field: "qty" }, { field: "name", dir: "desc" }], "app_1")).toEqual({
      fields: [{ field: "qty", dir: "asc" }, { field: "name", dir: "desc" }], signature: "qty:asc,name:desc", collection: "items", app: "app_1",
    });
    expect(resolveSort(items, undefined)).toEqual({ fields: [], signature: "", collection: "items", app: null });
  });

  it("a cursor answers only for the app and collection that made it", () => {
    const mine = resolveSort(loose, [{ field: "a" }], "app_1");
    const cursor = encodeCursor(mine, [1], 3);
    expect(() => afterCursorSql(mine, cursor)).not.toThrow();
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }], "app_2"), cursor))).toEqual({ code: "invalid_request", field: "since" });
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), cursor))).toEqual({ code: "invalid_request", field: "since" });
    expect(refusal(() => afterCursorSql(resolveSort(items, [{ field: "name" }], "app_1"), encodeCursor(resolveSort(loose, [{ field: "name" }], "app_1"), ["x"], 3))))
      .toEqual({ code: "invalid_request", field: "since" });
    const unsorted = encodeCursor(resolveSort(loose, undefined, "app_1"), [], 3);
    expect(refusal(() => afterCursorSql(resolveSort(items, undefined, "app_1"), unsorted))).toEqual({ code: "invalid_request", field: "since" });
  });

  it("a cursor is URL-safe, works only with its own sort, and garbage is refused", () => {
    const sort = resolveSort(loose, [{ field: "a" }, { field: "b", dir: "desc" }]);
    const cursor = encodeCursor(sort, ["x?/+é", null], 7);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(() => afterCursorSql(sort, cursor)).not.toThrow();
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), cursor))).toEqual({ code: "invalid_request", field: "since" });
    expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }, { field: "b" }]), cursor))).toEqual({ code: "invalid_request", field: "since" });
    const b64 = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const state = (o: object) => b64(JSON.stringify({ a: null, c: "loose", s: "a:asc", v: [1], r: 1, ...o }));
    expect(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), state({}))).not.toThrow();
    for (const junk of [
      "", "!", b64("[]"), b64("null"), state({ v: [{}] }), state({ r: -1 }), state({ r: "1" }), state({ v: [true] }),
      state({ a: 1 }), state({ c: null }), state({ c: undefined }), b64('{"s":"a:asc","v":[1],"r":1}'),
    ]) {
      expect(refusal(() => afterCursorSql(resolveSort(loose, [{ field: "a" }]), junk))).toEqual({ code: "invalid_request", field: "since" });
    }
  });

  it("cursorValues: booleans as 1/0, containers as JSON text, missing and null as null", () => {
    const sort = resolveSort(loose, [{ field: "a" }, { field: "b" }, { field: "c" }, { field: "d" }]);
    expect(cursorValues(sort, { a: true, b: [1, { x: 2 }], d: null })).toEqual([1, '[1,{"x":2}]', null, null]);
    expect(cursorValues(sort, "scalar")).toEqual([null, null, null, null]);
  });
});

describe("field names and values stay out of the SQL text", () => {
  it("every builder leaves `$.field` as a parameter", () => {
    const field = "zz_secret_field";
    const fragments: SqlFragment[] = [
      ...(["eq", "neq", "gt", "lt", "gte", "lte"] as const).map((op) => compareSql(field, op, 1)),
      compareSql(field, "in", [1, "a", true]), compareSql(field, "notIn", ["x"]), compareSql(field, "eq", false), compareSql(field, "neq", "x"),
      orderSql(resolveSort(loose, [{ field }])),
      afterCursorSql(resolveSort(loose, [{ field }]), encodeCursor(resolveSort(loose, [{ field }]), [3], 1)),
    ];
    for (const f of fragments) {
      expect(f.sql).not.toContain(field);
      expect(f.sql.split("?").length - 1).toBe(f.params.length);
      expect(f.params).toContain(`$.${field}`);
    }
  });

  it("an in/notIn list is one parameter (an array), however long", () => {
    const values = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const f = compareSql("x", "in", values);
    expect(f.params).toContainEqual(values);
    expect(f.params.length).toBeLessThan(10);
  });

  it("after compaction the statement binds one JSON array and names no field or value", () => {
    const out = compactParams(whereSql(loose, [{ field: "zz_field", op: "eq", value: "zz'value" }, { field: "zz_other", op: "in", value: [7, "zz_v"] }]));
    expect(out.sql).not.toMatch(/zz_/);
    expect(out.params).toHaveLength(1);
    expect(JSON.parse(out.params[0] as string)).toEqual(expect.arrayContaining(["$.zz_field", "zz'value", "$.zz_other", [7], ["zz_v"]]));
  });
});

describe("compactParams", () => {
  it("packs each distinct value once into one bound JSON array, keeping types apart", () => {
    const out = compactParams({ sql: "a = ? AND b = ? AND c = ? AND d = ? AND e = ? AND f = ? AND g = ?", params: ["$.x", 1, "$.x", "1", 1, null, [1, "a"]] });
    const at = (i: number) => `json_extract(?1, '$[${i}]')`;
    expect(out).toEqual({
      sql: `a = ${at(0)} AND b = ${at(1)} AND c = ${at(0)} AND d = ${at(2)} AND e = ${at(1)} AND f = ${at(3)} AND g = ${at(4)}`,
      params: [JSON.stringify(["$.x", 1, "1", null, [1, "a"]])],
    });
    expect(compactParams({ sql: "1", params: [] })).toEqual({ sql: "1", params: [] });
  });

  it("binds one parameter however many conditions, lists and sort fields a query combines", () => {
    const where = whereSql(loose, Array.from({ length: 20 }, (_, i) => ({ field: `f${i}`, op: i % 2 ? "notIn" : "gte", value: i % 2 ? Array.from({ length: 100 }, (_, j) => j) : i })));
    const sort = resolveSort(loose, [{ field: "f0" }, { field: "f1", dir: "desc" }, { field: "f2" }, { field: "f3" }]);
    const after = afterCursorSql(sort, encodeCursor(sort, [1, "b", null, 4], 9));
    const all = compactParams({ sql: `${where.sql} AND ${after.sql} ORDER BY ${orderSql(sort).sql}`, params: [...where.params, ...after.params, ...orderSql(sort).params] });
    expect(all.params).toHaveLength(1);
    expect(all.sql).not.toMatch(/\?(?!1\b)/);
  });

  it("refuses a fragment whose placeholders and parameters disagree, or a value JSON cannot carry", () => {
    expect(() => compactParams({ sql: "a = ? AND b = ?", params: [1] })).toThrow();
    expect(() => compactParams({ sql: "a = ?", params: [1, 2] })).toThrow();
    for (const bad of [Number.NaN, Infinity, undefined, true, { a: 1 }, [[1]], [Number.NaN], [null], [true]]) expect(() => compactParams({ sql: "a = ?", params: [bad] })).toThrow();
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

/** The in-memory evaluator get, pins and the feed socket use: the SQL must agree with it exactly. */
function oracle(row: Record<string, unknown>, c: Cond): boolean {
  return matchesCond(c, row);
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

/** Row data of every JSON type, including values SQLite and JavaScript are easy to get apart on. */
const TYPED: Val[] = [
  undefined, null, true, false, 0, 1, -1, 2, 2.5, -2.5, 10, 1e21, 5e-324, 2 ** 53, 2 ** 60, -(2 ** 62), 1152921504606847000,
  -8.39044634495622e+171, 8.962006162028389e-185, 7.786684335304877e-301, 0.1, 0.30000000000000004,
  "", "a", "b", "B", "ab", "1", "2", "10", "true", "null", "it's", 'say "hi"', "a\u0000b", "é", "\u{1F600}", "\uE000", "\uFFFF", "2024-01-15",
  [], [1], ["a"], [true], {}, { a: 1 },
];
const TYPED_SCALARS = TYPED.filter((v): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean");

describe("the SQL agrees with the in-memory evaluator", () => {
  it("every operator, with values of every type, on rows of every JSON type (missing, null, arrays and objects included)", async () => {
    const rows = TYPED.map((v) => (v === undefined ? {} : { f: v }));
    const conds: Cond[] = [];
    for (const value of TYPED_SCALARS) {
      for (const op of ["eq", "neq", "gt", "lt", "gte", "lte"] as const) conds.push({ field: "f", op, value });
      conds.push({ field: "f", op: "in", value: [value] }, { field: "f", op: "notIn", value: [value] });
    }
    const lists: Cond["value"][] = [
      [1, 2, 2.5], ["a", "b"], [true], [false], [true, false], [1, "1"], [2, "b", true], ["a", 1], [0, false], ["", "null"], [2 ** 60, 1e21, 5e-324],
    ];
    for (const value of lists) conds.push({ field: "f", op: "in", value }, { field: "f", op: "notIn", value });
    conds.push({ field: "g", op: "neq", value: 1 }, { field: "g", op: "notIn", value: ["x"] });
    const mismatches = await withRows("agree", rows, (sql, collection) => {
      const out: string[] = [];
      for (const c of conds) {
        const got = select(sql, collection, [compareSql(c.field, c.op, c.value)], orderSql(resolveSort(loose, undefined))).map((r) => r.key);
        const want = rows.flatMap((row, i) => (matchesCond(c, row) ? [`k${i}`] : []));
        if (JSON.stringify(got) !== JSON.stringify(want)) out.push(`${JSON.stringify(c)}: SQL ${got.join(",")} | memory ${want.join(",")}`);
      }
      return out;
    });
    expect(mismatches).toEqual([]);
    expect(conds.length).toBeGreaterThan(300);
  });

  it("neq and notIn never match a field of another type (a pin `team neq \"red\"` hides team 5 and [\"red\"])", async () => {
    const rows = [{ team: "blue" }, { team: "red" }, { team: 5 }, { team: ["red"] }, { team: null }, {}, { team: true }, { team: { red: 1 } }];
    const keys = await withRows("neq", rows, (sql, collection) => ({
      neq: select(sql, collection, [compareSql("team", "neq", "red")], orderSql(resolveSort(loose, undefined))).map((r) => r.key),
      notIn: select(sql, collection, [compareSql("team", "notIn", ["red", "green"])], orderSql(resolveSort(loose, undefined))).map((r) => r.key),
      mixed: select(sql, collection, [compareSql("team", "notIn", ["red", 5])], orderSql(resolveSort(loose, undefined))).map((r) => r.key),
    }));
    expect(keys).toEqual({ neq: ["k0"], notIn: ["k0"], mixed: [] });
  });

  it("strings order by code point in both (U+E000–U+FFFF before astral characters, as UTF-8 bytes sort)", () => {
    const sorted = ["", "a", "\u0000", "\u007f", "é", "\uE000", "\uFFFF", "\u{10000}", "\u{1F600}"].sort(compareCodePoints);
    expect(sorted).toEqual(["", "\u0000", "a", "\u007f", "é", "\uE000", "\uFFFF", "\u{10000}", "\u{1F600}"]);
    expect(matchesCond({ field: "f", op: "gt", value: "\uFFFF" }, { f: "\u{1F600}" })).toBe(true);
    expect(matchesCond({ field: "f", op: "lt", value: "\uFFFF" }, { f: "\u{1F600}" })).toBe(false);
  });
});

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

  it("the largest query the limits allow runs: 8 relations, creator and editor, a 20-term pin, 20 conditions, 4 sort fields, a cursor", async () => {
    const who = { kind: "grant" as const, id: "grh_holder" };
    // Every relation, pin, where and sort field distinct, and each value distinct.
    const anyOf: RowTerm[] = [
      { kind: "creator", author: who }, { kind: "editor", author: who },
      ...Array.from({ length: 8 }, (_, i): RowTerm => ({ kind: "field", field: `rel${i}`, op: "eq", value: who.id, relation: `r${i}` })),
    ];
    const pin: RowTerm[] = Array.from({ length: 20 }, (_, i): RowTerm => ({ kind: "field", field: `pin${i}`, op: i % 2 ? "neq" : "notIn", value: i % 2 ? `not-${i}` : [`no-${i}`, `nope-${i}`] }));
    const where = whereSql(loose, Array.from({ length: 20 }, (_, i) => ({ field: `w${i}`, op: (["eq", "gte", "lte", "in"] as const)[i % 4], value: i % 4 === 3 ? [i, i + 0.5, 1000 + i] : i })));
    const sort = resolveSort(loose, [{ field: "s0" }, { field: "s1", dir: "desc" }, { field: "s2" }, { field: "s3", dir: "desc" }], "app_max");
    const rows = Array.from({ length: 30 }, (_, n) => {
      const data: Record<string, unknown> = { [`rel${n % 8}`]: who.id, s0: n % 3, s1: `s${n % 5}`, s2: n % 2 === 0, s3: n };
      for (let i = 0; i < 20; i++) {
        data[`pin${i}`] = `ok-${i}`;
        data[`w${i}`] = i % 4 === 1 ? i + 1 : i % 4 === 2 ? i - 1 : i;
      }
      return data;
    });
    const order = orderSql(sort);
    const scope = filterSql({ all: false, anyOf, allOf: pin });
    const run = (sql: SqlStorage, collection: string, since: string | null, limit: number) => {
      const after = since ? afterCursorSql(sort, since) : { sql: "1", params: [] };
      const fragment = {
        sql: `SELECT key, data, rid FROM _svc_rows WHERE collection = ? AND deleted_at IS NULL AND (${scope.sql}) AND (${where.sql}) AND (${after.sql}) ORDER BY ${order.sql} LIMIT ?`,
        params: [collection, ...scope.params, ...where.params, ...after.params, ...order.params, limit],
      };
      const q = compactParams(fragment);
      // Far more values than the store would bind (100), in one parameter.
      expect(fragment.params.length).toBeGreaterThan(150);
      expect((JSON.parse(q.params[0] as string) as unknown[]).length).toBeGreaterThan(90);
      expect(q.params).toHaveLength(1);
      return sql.exec<{ key: string; data: string; rid: number }>(q.sql, ...q.params).toArray();
    };
    const { whole, paged } = await withRows("max", rows, (sql, collection) => {
      const whole = run(sql, collection, null, 1000).map((r) => r.key);
      const paged: string[] = [];
      let since: string | null = null;
      for (let guard = 0; guard < 100; guard++) {
        const page = run(sql, collection, since, 7);
        paged.push(...page.map((r) => r.key));
        if (page.length < 7) break;
        const last = page[page.length - 1];
        since = encodeCursor(sort, cursorValues(sort, JSON.parse(last.data)), last.rid);
      }
      return { whole, paged };
    });
    expect(whole).toHaveLength(30);
    expect(paged).toEqual(whole);
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
