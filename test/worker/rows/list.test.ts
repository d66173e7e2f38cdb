// GET /v1/apps/:id/collections/:name (WIRE §2.3, spec A Shapes 4): limit bounds, the q
// grammar and its refusals, where semantics (no coercion across types; missing and null
// match nothing, neq and notIn included), sort with nulls and ties, and keyset cursors
// that visit every row exactly once, even while rows are being inserted, and answer only
// for the app, collection and sort that made them.
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { listQuery, seedRows, setup, type Ctx, type Row } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

type Data = Record<string, unknown>;

async function batch(ctx: Ctx, collection: string, rows: unknown[]): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < rows.length; i += 100) {
    const body = await json<{ results: { ok: boolean; key: string }[]; error_count: number }>(
      await ctx.agentCall(ctx.path(collection, "/batch"), { json: { rows: rows.slice(i, i + 100).map((data) => ({ data })) } }), 200);
    expect(body.error_count).toBe(0);
    keys.push(...body.results.map((r) => r.key));
  }
  return keys;
}

async function refused(ctx: Ctx, collection: string, query: Parameters<typeof listQuery>[0], field: string | null): Promise<void> {
  const e = await expectError(await ctx.agentCall(ctx.path(collection, listQuery(query))), 400, "invalid_request");
  if (field !== null) expect(e.details?.field).toBe(field);
}

function where(...conds: unknown[]) {
  return { where: conds };
}

describe("list: limit and shape", () => {
  it("returns { rows, next_cursor, has_more }; limit 1..1000, default 100", async () => {
    const ctx = await setup();
    const empty = await ctx.list("tasks");
    expect(empty).toEqual({ rows: [], next_cursor: null, has_more: false });
    await seedRows(ctx, "free", 101);
    const first = await ctx.list("free");
    expect(Object.keys(first).sort()).toEqual(["has_more", "next_cursor", "rows"]);
    expect(first.rows).toHaveLength(100);
    expect(first.has_more).toBe(true);
    expect(typeof first.next_cursor).toBe("string");
    const rest = await ctx.list("free", { since: first.next_cursor });
    expect(rest.rows.map((r) => r.data.i)).toEqual([100]);
    expect(rest.has_more).toBe(false);
    // The last page ends the list: a client paging while next_cursor is set stops here.
    expect(rest.next_cursor).toBeNull();
    // A cursor from a middle page stays valid: resuming from it later sees the newer rows too.
    const later = await ctx.create("free", { i: 101 });
    const resumed = await ctx.list("free", { since: first.next_cursor });
    expect(resumed.rows.map((r) => r.key)).toEqual([rest.rows[0].key, later.key]);
    expect(resumed.next_cursor).toBeNull();
    expect((await ctx.list("free", { limit: 1 })).rows).toHaveLength(1);
    expect((await ctx.list("free", { limit: 1000 })).rows).toHaveLength(102);
    for (const limit of ["0", "1001", "-1", "1.5", "abc", "", "1e9", "NaN", " "]) {
      await refused(ctx, "free", { limit }, "limit");
    }
  });

  it("rows are live rows only, in insertion order by default", async () => {
    const ctx = await setup();
    const keys = await batch(ctx, "free", [{ n: 3 }, { n: 1 }, { n: 2 }]);
    await ctx.remove("free", keys[1]);
    expect((await ctx.list("free")).rows.map((r) => r.key)).toEqual([keys[0], keys[2]]);
  });

  it("unknown collection → 404 collection_not_found", async () => {
    const ctx = await setup();
    await expectError(await ctx.agentCall(ctx.path("nope")), 404, "collection_not_found");
  });
});

describe("list: q refusals (400 invalid_request with the offending field)", () => {
  it("q must be a JSON object with only where and sort", async () => {
    const ctx = await setup();
    await refused(ctx, "tasks", { q: "{nope" }, "q");
    await refused(ctx, "tasks", { q: "[]" }, "q");
    await refused(ctx, "tasks", { q: "null" }, "q");
    await refused(ctx, "tasks", { q: "5" }, "q");
    await refused(ctx, "tasks", { q: "\"x\"" }, "q");
    await refused(ctx, "tasks", { q: { where: [], extra: 1 } }, "q.extra");
    await refused(ctx, "tasks", { q: { filter: [] } }, "q.filter");
    await refused(ctx, "tasks", { q: "x".repeat(8001) }, "q");
    // Empty q and empty lists are no filter at all.
    for (const q of ["", "{}", { where: [] }, { sort: [] }, { where: [], sort: [] }]) {
      expect((await ctx.list("tasks", { q })).rows).toEqual([]);
    }
  });

  it("where: an array of at most 20 { field, op, value }", async () => {
    const ctx = await setup();
    for (const w of [{}, "x", 5, null, true]) await refused(ctx, "tasks", { q: { where: w } }, "q.where");
    await refused(ctx, "tasks", { q: where(...Array.from({ length: 21 }, () => ({ field: "n", op: "eq", value: 1 }))) }, "q.where");
    for (const c of [null, 5, "n", [], ["n", "eq", 1]]) await refused(ctx, "tasks", { q: where(c) }, "q.where.0");
    await refused(ctx, "tasks", { q: where({ field: "n", op: "eq", value: 1 }, { field: "n", op: "eq", value: 1, extra: true }) }, "q.where.1");
    // Twenty conditions are fine.
    expect((await ctx.list("tasks", { q: where(...Array.from({ length: 20 }, (_, i) => ({ field: "n", op: "neq", value: i }))) })).rows).toEqual([]);
  });

  it("fields: simple identifiers, and declared properties when there is a schema", async () => {
    const ctx = await setup();
    for (const field of ["a.b", "1a", "", "a-b", "$.n", "n'", "x".repeat(65), 5, null, undefined, ["n"]]) {
      await refused(ctx, "tasks", { q: where({ field, op: "eq", value: 1 }) }, "q.where.0.field");
      await refused(ctx, "free", { q: where({ field, op: "eq", value: 1 }) }, "q.where.0.field");
    }
    await refused(ctx, "tasks", { q: where({ field: "nope", op: "eq", value: 1 }) }, "q.where.0.field");
    await refused(ctx, "tasks", { q: { sort: [{ field: "nope" }] } }, "q.sort.0.field");
    // Schemaless: any identifier is a field.
    expect((await ctx.list("free", { q: where({ field: "nope", op: "eq", value: 1 }) })).rows).toEqual([]);
    expect((await ctx.list("free", { q: where({ field: "x".repeat(64), op: "eq", value: 1 }) })).rows).toEqual([]);
  });

  it("ops: eq neq in notIn gt lt gte lte only; in/notIn take a non-empty array of at most 100 scalars", async () => {
    const ctx = await setup();
    for (const op of ["like", "", "EQ", "=", null, 1, undefined, "contains"]) {
      await refused(ctx, "tasks", { q: where({ field: "n", op, value: 1 }) }, "q.where.0.op");
    }
    for (const op of ["in", "notIn"]) {
      for (const value of [[], 1, "a", null, {}, [{}], [[1]], [null], Array.from({ length: 101 }, (_, i) => i)]) {
        await refused(ctx, "tasks", { q: where({ field: "n", op, value }) }, "q.where.0.value");
      }
      expect((await ctx.list("tasks", { q: where({ field: "n", op, value: Array.from({ length: 100 }, (_, i) => i) }) })).rows).toEqual([]);
    }
    for (const op of ["eq", "neq", "gt", "lt", "gte", "lte"]) {
      for (const value of [null, {}, [1], undefined]) {
        await refused(ctx, "tasks", { q: where({ field: "n", op, value }) }, "q.where.0.value");
      }
    }
  });

  it("values must have the declared type; booleans never order", async () => {
    const ctx = await setup();
    const cases: Array<[string, string, unknown, string]> = [
      ["n", "eq", "5", "q.where.0.value"],
      ["n", "gt", true, "q.where.0.value"],
      ["title", "eq", 5, "q.where.0.value"],
      ["title", "in", ["a", 1], "q.where.0.value"],
      ["done", "eq", "true", "q.where.0.value"],
      ["done", "eq", 1, "q.where.0.value"],
      ["note", "eq", 5, "q.where.0.value"],
      ["score", "lt", "1", "q.where.0.value"],
      ["done", "gt", true, "q.where.0.op"],
      ["done", "lte", false, "q.where.0.op"],
    ];
    for (const [field, op, value, at] of cases) await refused(ctx, "tasks", { q: where({ field, op, value }) }, at);
    // Schemaless: booleans still never order.
    await refused(ctx, "free", { q: where({ field: "v", op: "gte", value: true }) }, "q.where.0.op");
    // An integer field compares with any number.
    expect((await ctx.list("tasks", { q: where({ field: "n", op: "eq", value: 1.5 }) })).rows).toEqual([]);
  });

  it("sort: an array of at most 4 { field, dir? } with dir asc or desc", async () => {
    const ctx = await setup();
    for (const s of [{}, "n", 5, null]) await refused(ctx, "tasks", { q: { sort: s } }, "q.sort");
    await refused(ctx, "tasks", { q: { sort: [{ field: "n" }, { field: "n" }, { field: "n" }, { field: "n" }, { field: "n" }] } }, "q.sort");
    for (const s of [null, "n", [], 1]) await refused(ctx, "tasks", { q: { sort: [s] } }, "q.sort.0");
    await refused(ctx, "tasks", { q: { sort: [{ field: "n", order: "asc" }] } }, "q.sort.0");
    for (const dir of ["up", "ASC", "", 1, null]) await refused(ctx, "tasks", { q: { sort: [{ field: "n", dir }] } }, "q.sort.0.dir");
    await refused(ctx, "tasks", { q: { sort: [{ dir: "asc" }] } }, "q.sort.0.field");
  });
});

describe("list: where semantics", () => {
  const VALUES: Array<[string, Data]> = [
    ["one", { v: 1 }], ["two", { v: 2 }], ["twoStr", { v: "2" }], ["b", { v: "b" }], ["t", { v: true }], ["f", { v: false }],
    ["nul", { v: null }], ["missing", {}], ["twoHalf", { v: 2.5 }], ["arr", { v: [2] }], ["obj", { v: { a: 1 } }], ["zero", { v: 0 }],
    ["empty", { v: "" }],
  ];

  async function mixed(): Promise<{ ctx: Ctx; named: (rows: Row[]) => string[] }> {
    const ctx = await setup();
    await batch(ctx, "free", VALUES.map(([name, data]) => ({ ...data, name })));
    return { ctx, named: (rows) => rows.map((r) => r.data.name as string) };
  }

  async function names(ctx: Ctx, named: (rows: Row[]) => string[], ...conds: unknown[]): Promise<string[]> {
    return named((await ctx.list("free", { q: where(...conds) })).rows);
  }

  it("eq/in match only values of the condition's JSON type", async () => {
    const { ctx, named } = await mixed();
    expect(await names(ctx, named, { field: "v", op: "eq", value: 2 })).toEqual(["two"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: 2.0 })).toEqual(["two"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: "2" })).toEqual(["twoStr"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: 1 })).toEqual(["one"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: true })).toEqual(["t"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: false })).toEqual(["f"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: 0 })).toEqual(["zero"]);
    expect(await names(ctx, named, { field: "v", op: "eq", value: "" })).toEqual(["empty"]);
    expect(await names(ctx, named, { field: "v", op: "in", value: [2, "b", true] })).toEqual(["two", "b", "t"]);
    expect(await names(ctx, named, { field: "v", op: "in", value: ["2", 2.5, false, 0] })).toEqual(["twoStr", "f", "twoHalf", "zero"]);
    expect(await names(ctx, named, { field: "v", op: "in", value: [1] })).toEqual(["one"]);
    expect(await names(ctx, named, { field: "nope", op: "eq", value: 1 })).toEqual([]);
  });

  it("missing and null fields, arrays, objects and values of another type match nothing, neq and notIn included", async () => {
    const { ctx, named } = await mixed();
    // neq compares like eq: only fields of the condition value's type, never across types.
    expect(await names(ctx, named, { field: "v", op: "neq", value: 2 })).toEqual(["one", "twoHalf", "zero"]);
    expect(await names(ctx, named, { field: "v", op: "neq", value: "zzz" })).toEqual(["twoStr", "b", "empty"]);
    expect(await names(ctx, named, { field: "v", op: "neq", value: true })).toEqual(["f"]);
    // notIn is "neq every value": one value per type it may hold, and a list mixing types matches nothing.
    expect(await names(ctx, named, { field: "v", op: "notIn", value: [2, 0] })).toEqual(["one", "twoHalf"]);
    expect(await names(ctx, named, { field: "v", op: "notIn", value: ["b"] })).toEqual(["twoStr", "empty"]);
    expect(await names(ctx, named, { field: "v", op: "notIn", value: [false] })).toEqual(["t"]);
    expect(await names(ctx, named, { field: "v", op: "notIn", value: [2, "b", true] })).toEqual([]);
    expect(await names(ctx, named, { field: "nope", op: "neq", value: 1 })).toEqual([]);
    expect(await names(ctx, named, { field: "nope", op: "notIn", value: [1] })).toEqual([]);
  });

  it("gt/lt/gte/lte order numbers with numbers and strings with strings only", async () => {
    const { ctx, named } = await mixed();
    expect(await names(ctx, named, { field: "v", op: "gt", value: 1 })).toEqual(["two", "twoHalf"]);
    expect(await names(ctx, named, { field: "v", op: "gte", value: 1 })).toEqual(["one", "two", "twoHalf"]);
    expect(await names(ctx, named, { field: "v", op: "lt", value: 2 })).toEqual(["one", "zero"]);
    expect(await names(ctx, named, { field: "v", op: "lte", value: 2.5 })).toEqual(["one", "two", "twoHalf", "zero"]);
    expect(await names(ctx, named, { field: "v", op: "gt", value: "a" })).toEqual(["b"]);
    expect(await names(ctx, named, { field: "v", op: "lt", value: "a" })).toEqual(["twoStr", "empty"]);
    expect(await names(ctx, named, { field: "v", op: "gte", value: "" })).toEqual(["twoStr", "b", "empty"]);
    expect(await names(ctx, named, { field: "v", op: "lt", value: 100 })).toEqual(["one", "two", "twoHalf", "zero"]);
  });

  it("conditions are ANDed; dates compare as ISO-8601 strings", async () => {
    const ctx = await setup();
    await batch(ctx, "tasks", [
      { title: "a", due: "2024-01-15", n: 1, done: false },
      { title: "b", due: "2024-02-01", n: 2, done: true },
      { title: "c", due: "2024-03-10T09:00:00Z", n: 3, done: false },
      { title: "d", n: 4, done: false },
    ]);
    const titles = async (...conds: unknown[]) => (await ctx.list("tasks", { q: where(...conds) })).rows.map((r) => r.data.title);
    expect(await titles({ field: "due", op: "gte", value: "2024-02-01" })).toEqual(["b", "c"]);
    expect(await titles({ field: "due", op: "lt", value: "2024-03-01" })).toEqual(["a", "b"]);
    expect(await titles({ field: "done", op: "eq", value: false }, { field: "n", op: "gte", value: 2 })).toEqual(["c", "d"]);
    expect(await titles({ field: "done", op: "eq", value: false }, { field: "due", op: "neq", value: "x" })).toEqual(["a", "c"]);
    expect(await titles({ field: "title", op: "in", value: ["a", "d"] }, { field: "title", op: "notIn", value: ["d"] })).toEqual(["a"]);
  });
});

// ---- sort and cursors ----

interface Spec {
  field: string;
  dir?: "asc" | "desc";
}

/** The order the relay promises: per field nulls (and missing) first ascending, last descending; ties by insertion. */
function expectedOrder(rows: Array<{ data: Data; seq: number }>, sort: Spec[]): Array<{ data: Data; seq: number }> {
  const rank = (v: unknown): [number, unknown] => {
    if (v === undefined || v === null) return [0, 0];
    if (typeof v === "boolean") return [1, v ? 1 : 0];
    if (typeof v === "number") return [1, v];
    return [2, v];
  };
  return [...rows].sort((a, b) => {
    for (const s of sort) {
      const [ta, va] = rank(a.data[s.field]);
      const [tb, vb] = rank(b.data[s.field]);
      let c = ta - tb || (va === vb ? 0 : (va as number) < (vb as number) ? -1 : 1);
      if (s.dir === "desc") c = -c;
      if (c !== 0) return c;
    }
    return a.seq - b.seq;
  });
}

const SORTS: Spec[][] = [
  [],
  [{ field: "n" }],
  [{ field: "n", dir: "desc" }],
  [{ field: "title", dir: "asc" }],
  [{ field: "n", dir: "asc" }, { field: "title", dir: "desc" }],
  [{ field: "done", dir: "desc" }, { field: "n", dir: "asc" }, { field: "score", dir: "desc" }],
  [{ field: "score" }, { field: "done" }, { field: "n", dir: "desc" }, { field: "title", dir: "desc" }],
];

/** 40 rows with repeats, gaps (missing), nulls in `note` and every type of field. */
function taskRows(count = 40): Data[] {
  return Array.from({ length: count }, (_, i) => {
    const row: Data = { title: `t${String((i * 7) % 13).padStart(2, "0")}` };
    if (i % 5 !== 0) row.n = (i * 3) % 7;
    if (i % 3 !== 0) row.score = ((i * 11) % 9) / 2;
    if (i % 4 !== 1) row.done = i % 2 === 0;
    row.note = i % 6 === 0 ? null : `note${i % 4}`;
    return row;
  });
}

describe("list: sort and cursor paging", () => {
  it("asc puts nulls first, desc last; ties keep insertion order", async () => {
    const ctx = await setup();
    await batch(ctx, "tasks", [{ title: "a", n: 3 }, { title: "b", n: 1 }, { title: "c" }, { title: "d", n: 2 }, { title: "e", n: 1 }, { title: "f" }]);
    const titles = async (sort: Spec[]) => (await ctx.list("tasks", { q: { sort } })).rows.map((r) => r.data.title).join("");
    expect(await titles([{ field: "n" }])).toBe("cfbeda");
    expect(await titles([{ field: "n", dir: "asc" }])).toBe("cfbeda");
    expect(await titles([{ field: "n", dir: "desc" }])).toBe("adbecf");
    expect(await titles([{ field: "n", dir: "desc" }, { field: "title", dir: "desc" }])).toBe("adebfc");
    expect(await titles([{ field: "note" }])).toBe("abcdef");
  });

  it("every sort variant, any page size: every row exactly once, in order", async () => {
    const ctx = await setup();
    const data = taskRows().map((d) => JSON.parse(JSON.stringify(d)) as Data);
    const keys = await batch(ctx, "tasks", data);
    const all = data.map((d, seq) => ({ data: d, seq, key: keys[seq] }));
    const conds = [undefined, [{ field: "n", op: "gte", value: 2 }], [{ field: "note", op: "neq", value: "note1" }]];
    for (const sort of SORTS) {
      for (const w of conds) {
        const q = { ...(sort.length ? { sort } : {}), ...(w ? { where: w } : {}) };
        const matching = all.filter((r) => {
          if (!w) return true;
          const c = w[0];
          const v = r.data[c.field];
          if (v === undefined || v === null) return false;
          return c.op === "gte" ? (v as number) >= (c.value as number) : v !== c.value;
        });
        const expected = expectedOrder(matching, sort).map((r) => (r as { key?: string }).key);
        const whole = (await ctx.list("tasks", { q, limit: 1000 })).rows.map((r) => r.key);
        expect(whole, JSON.stringify(q)).toEqual(expected);
        // Page size 1 puts a cursor on every row (every tie and null; the query unit tests do
        // this for many more random sorts); 7 crosses runs of ties.
        for (const limit of w === undefined && SORTS.indexOf(sort) === 5 ? [1, 7] : [7]) {
          const paged = (await ctx.listAll("tasks", q, limit)).map((r) => r.key);
          expect(paged, `${JSON.stringify(q)} limit ${limit}`).toEqual(expected);
        }
      }
    }
  }, 240_000);

  it("mixed types in one field page exactly like one big page", async () => {
    const ctx = await setup();
    const values: unknown[] = [3, "b", null, true, 1.5, "a", false, [1], { a: 1 }, 0, "", -2, "B", 1, undefined, "é", "z", 1e10];
    await batch(ctx, "free", [...values, ...values].map((v, i) => (v === undefined ? { i } : { v, i })));
    for (const sort of [[{ field: "v" }], [{ field: "v", dir: "desc" }], [{ field: "v", dir: "desc" }, { field: "i", dir: "desc" }]] as Spec[][]) {
      const whole = (await ctx.list("free", { q: { sort }, limit: 1000 })).rows.map((r) => r.key);
      expect(whole).toHaveLength(values.length * 2);
      for (const limit of sort.length === 1 ? [1, 4] : [4]) expect((await ctx.listAll("free", { sort }, limit)).map((r) => r.key)).toEqual(whole);
    }
  }, 120_000);

  it("rows inserted between pages: every original row exactly once, in order; later rows only after the cursor", async () => {
    for (const sort of [[{ field: "n" }], [{ field: "n", dir: "desc" }], []] as Spec[][]) {
      const ctx = await setup();
      await batch(ctx, "tasks", Array.from({ length: 20 }, (_, i) => ({ title: `t${i}`, n: i * 10 })));
      const q = sort.length ? { sort } : {};
      const before = (await ctx.list("tasks", { q, limit: 1000 })).rows.map((r) => r.key);
      const seen: Row[] = [];
      let since: string | null = null;
      let inserted = 0;
      for (;;) {
        const page = await ctx.list("tasks", { q, since, limit: 3 });
        seen.push(...page.rows);
        if (!page.has_more) break;
        since = page.next_cursor;
        // New rows sort everywhere: before the cursor, after it, and tied with it (on the
        // first pages only, so the walk ends).
        const lastN = page.rows[page.rows.length - 1].data.n as number;
        if (inserted < 12) await batch(ctx, "tasks", [{ title: `lo${inserted++}`, n: -1 }, { title: `hi${inserted++}`, n: 1000 }, { title: `tie${inserted++}`, n: lastN }]);
      }
      const keys = seen.map((r) => r.key);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys.filter((k) => before.includes(k))).toEqual(before);
      // What was seen is in the promised order.
      const ordered = expectedOrder(seen.map((r, i) => ({ data: r.data, seq: i, rid: r.key })), sort);
      if (sort.length) expect(seen.map((r) => r.data.n)).toEqual(ordered.map((r) => r.data.n));
      // Rows inserted after the cursor's position show up; rows before it never do.
      const newOnes = seen.filter((r) => !before.includes(r.key));
      const kinds = new Set(newOnes.map((r) => String(r.data.title).replace(/\d+$/, "")));
      if (sort.length === 0) expect([...kinds].sort()).toEqual(["hi", "lo", "tie"]);
      if (sort.length === 1 && sort[0].dir === undefined) expect([...kinds].sort()).toEqual(["hi", "tie"]);
      if (sort.length === 1 && sort[0].dir === "desc") expect([...kinds].sort()).toEqual(["lo", "tie"]);
    }
  }, 120_000);

  it("an update moving a row between pages never makes another row repeat or vanish", async () => {
    const ctx = await setup();
    const keys = await batch(ctx, "tasks", Array.from({ length: 10 }, (_, i) => ({ title: `t${i}`, n: i })));
    const q = { sort: [{ field: "n" }] };
    const first = await ctx.list("tasks", { q, limit: 4 });
    await ctx.update("tasks", keys[8], { title: "t8", n: -5 }); // moves before the cursor
    await ctx.update("tasks", keys[1], { title: "t1", n: 50 }); // moves after it
    const rest: Row[] = [];
    let since = first.next_cursor;
    for (;;) {
      const page = await ctx.list("tasks", { q, since, limit: 4 });
      rest.push(...page.rows);
      if (!page.has_more) break;
      since = page.next_cursor;
    }
    expect([...first.rows, ...rest].map((r) => r.data.title)).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t9", "t1"]);
  }, 30_000);

  it("a cursor from another sort, or one not issued by the relay → 400 (field since)", async () => {
    const ctx = await setup();
    await batch(ctx, "tasks", Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, n: i })));
    const byN = await ctx.list("tasks", { q: { sort: [{ field: "n" }] }, limit: 2 });
    const plain = await ctx.list("tasks", { limit: 2 });
    await refused(ctx, "tasks", { q: { sort: [{ field: "n", dir: "desc" }] }, since: byN.next_cursor }, "since");
    await refused(ctx, "tasks", { q: { sort: [{ field: "title" }] }, since: byN.next_cursor }, "since");
    await refused(ctx, "tasks", { since: byN.next_cursor }, "since");
    await refused(ctx, "tasks", { q: { sort: [{ field: "n" }] }, since: plain.next_cursor }, "since");
    await refused(ctx, "tasks", { q: { sort: [{ field: "n" }, { field: "title" }] }, since: byN.next_cursor }, "since");
    // A where clause may change between pages; the sort may not.
    expect((await ctx.list("tasks", { q: { sort: [{ field: "n" }], where: [{ field: "n", op: "lt", value: 4 }] }, since: byN.next_cursor })).rows.map((r) => r.data.n)).toEqual([2, 3]);
    const b64 = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const garbage = [
      "!!!", "abc", "a", "%%%", b64("not json"), b64("[]"), b64("null"), b64("{}"), b64(JSON.stringify({ s: "", v: [], r: "1" })),
      b64(JSON.stringify({ s: "n:asc", v: [{}], r: 1 })), b64(JSON.stringify({ s: "n:asc", v: [[1]], r: 1 })),
      b64(JSON.stringify({ s: "n:asc", v: [true], r: 1 })), b64(JSON.stringify({ s: "n:asc", v: [1], r: 1.5 })),
      b64(JSON.stringify({ s: "n:asc", v: [1], r: -1 })), b64(JSON.stringify({ s: "n:asc", v: [1, 2], r: 1 })),
      b64(JSON.stringify({ s: "n:asc", v: [1], r: 1e300 })), "\u00ff\u00fe", "x".repeat(2000),
    ];
    for (const since of garbage) {
      await refused(ctx, "tasks", { q: { sort: [{ field: "n" }] }, since }, "since");
    }
    await refused(ctx, "tasks", { q: { sort: [{ field: "n" }] }, since: "x".repeat(2001) }, "since");
    // A well-formed cursor the relay could have made works, wherever it points.
    const made = { a: ctx.appId, c: "tasks", s: "n:asc", v: [2], r: 0 };
    expect((await ctx.list("tasks", { q: { sort: [{ field: "n" }] }, since: b64(JSON.stringify(made)) })).rows.map((r) => r.data.n)).toEqual([2, 3, 4]);
    expect((await ctx.list("tasks", { since: b64(JSON.stringify({ ...made, s: "", v: [], r: 999999 })) })).rows).toEqual([]);
    // Without the app and collection it was made for (an older cursor shape): refused.
    await refused(ctx, "tasks", { q: { sort: [{ field: "n" }] }, since: b64(JSON.stringify({ s: "n:asc", v: [2], r: 0 })) }, "since");
  }, 60_000);

  it("a cursor from another collection or another app → 400 (field since), never a silent empty page", async () => {
    const ctx = await setup();
    const other = await setup();
    await batch(ctx, "tasks", Array.from({ length: 3 }, (_, i) => ({ title: `t${i}`, n: i })));
    await batch(ctx, "free", Array.from({ length: 3 }, (_, i) => ({ n: i })));
    await batch(other, "tasks", Array.from({ length: 3 }, (_, i) => ({ title: `o${i}`, n: i })));
    for (const q of [undefined, { sort: [{ field: "n" }] }]) {
      const tasks = await ctx.list("tasks", { q, limit: 1 });
      const free = await ctx.list("free", { q, limit: 1 });
      const elsewhere = await other.list("tasks", { q, limit: 1 });
      const e1 = await expectError(await ctx.agentCall(ctx.path("free", listQuery({ q, since: tasks.next_cursor }))), 400, "invalid_request");
      expect(e1.details).toEqual({ field: "since" });
      expect(e1.message).toContain("another collection");
      await refused(ctx, "tasks", { q, since: free.next_cursor }, "since");
      const e2 = await expectError(await ctx.agentCall(ctx.path("tasks", listQuery({ q, since: elsewhere.next_cursor }))), 400, "invalid_request");
      expect(e2.details).toEqual({ field: "since" });
      expect(e2.message).toContain("another app");
      // Each cursor still pages its own list.
      expect((await ctx.list("tasks", { q, since: tasks.next_cursor })).rows.map((r) => r.data.n)).toEqual([1, 2]);
      expect((await other.list("tasks", { q, since: elsewhere.next_cursor })).rows.map((r) => r.data.n)).toEqual([1, 2]);
    }
  }, 60_000);

  it("pages of large rows stop early (has_more) and still page through every row", async () => {
    const ctx = await setup();
    const big = "x".repeat(60_000);
    await seedRows(ctx, "free", 300, (i) => ({ i, big }));
    const first = await ctx.list("free", { limit: 1000 });
    expect(first.rows.length).toBeGreaterThan(0);
    expect(first.rows.length).toBeLessThan(300);
    expect(first.has_more).toBe(true);
    const all = await ctx.listAll("free", undefined, 1000);
    expect(all.map((r) => r.data.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  }, 120_000);
});
