// No input produces a 500: a sweep of hostile path segments, query strings, bodies, media
// types and credentials over every row and feed route. Every answer must be JSON; every
// error the exact catalogue envelope with the catalogue's status; and afterwards the
// store holds exactly what it held before the hostile requests that could not write.
import { describe, expect, it, vi } from "vitest";
import { catalogue, type ErrorCode } from "../../../src/errors";
import { call, type CallOptions } from "../helpers";
import { setup, type Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 180_000 });

interface Sent {
  label: string;
  path: string;
  opts: CallOptions;
}

/** Sends each request and checks the answer is never a server error and always well-formed. */
async function sweep(requests: Sent[], send: (path: string, opts: CallOptions) => Promise<Response>): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  for (let i = 0; i < requests.length; i += 8) {
    await Promise.all(requests.slice(i, i + 8).map(async ({ label, path, opts }) => {
      const res = await send(path, opts);
      const text = await res.text();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      expect(res.status, `${label}: ${text.slice(0, 300)}`).toBeLessThan(500);
      expect(res.headers.get("content-type") ?? "", label).toMatch(/^application\/json/);
      const body = JSON.parse(text) as { error?: { code: ErrorCode; message: string; hint: string; retryable: boolean; docs_url: string } };
      if (res.status >= 400) {
        expect(body.error, label).toBeDefined();
        const entry = catalogue[body.error!.code];
        expect(entry, `${label}: unknown code ${body.error!.code}`).toBeDefined();
        expect(entry.status, `${label}: ${body.error!.code}`).toBe(res.status);
        expect(body.error!.hint).toBe(entry.hint);
        expect(typeof body.error!.message).toBe("string");
      }
    }));
  }
  return statuses;
}

const COLLECTIONS = [
  "tasks", "nope", "__proto__", "constructor", "hasOwnProperty", "%00", "a".repeat(300), "%ff", "..", "%2e%2e", "t%20asks", "TASKS",
  "%F0%9F%92%A5", "tasks%2Fx", "'%3B%20DROP%20TABLE%20_svc_rows%3B--",
];

const KEYS = [
  "k", "%00", "%2e%2e", "a".repeat(5000), "%ff", "%E0%A4%A", "__proto__", "constructor", "%F0%9F%92%A5", "a%2Fb", "%27%20OR%201%3D1%20--",
  encodeURIComponent("\"); DROP TABLE _svc_rows; --"), "%25", "%5C", "k%0Ak", "x".repeat(129),
];

function routes(ctx: Ctx, collection: string, key: string): Array<[string, string, CallOptions]> {
  const B = `/v1/apps/${ctx.appId}/collections/${collection}`;
  return [
    ["GET", B, {}],
    ["GET", `${B}/count`, {}],
    ["GET", `${B}/deleted`, {}],
    ["GET", `${B}/retention`, {}],
    ["PATCH", `${B}/retention`, { json: { maxRows: 5 } }],
    ["POST", B, { json: { data: { title: "x" } } }],
    ["POST", `${B}/batch`, { json: { rows: [{ data: { title: "x" } }] } }],
    ["DELETE", `${B}/batch`, { json: { keys: [key] } }],
    ["GET", `${B}/${key}`, {}],
    ["PATCH", `${B}/${key}`, { json: { data: { title: "x" } } }],
    ["DELETE", `${B}/${key}`, {}],
    ["DELETE", `${B}/${key}/purge`, {}],
    ["POST", `${B}/${key}/restore`, {}],
    ["PUT", `${B}/${key}`, { json: {} }],
  ];
}

const BODIES: Array<[string, string | Uint8Array]> = [
  ["empty", ""], ["null", "null"], ["array", "[]"], ["number", "1"], ["string", "\"x\""], ["truncated", "{"], ["half", "{\"data\":"],
  ["bytes", new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0xc3])], ["bom", "\ufeff{\"data\":{}}"], ["proto", "{\"__proto__\":{\"data\":1},\"data\":{\"__proto__\":{\"title\":1}}}"],
  ["deep", `{"data":${"[".repeat(20_000)}${"]".repeat(20_000)}}`], ["deep object", `{"data":${"{\"a\":".repeat(5_000)}1${"}".repeat(5_000)}}`],
  ["operator key", "{\"data\":{\"title\":\"x\"},\"key\":{\"$gt\":\"\"}}"], ["huge number", "{\"data\":{\"title\":\"x\",\"n\":1e309},\"if_match\":1e308}"],
  ["unsafe int", "{\"data\":{\"title\":\"x\"},\"if_match\":9007199254740993}"], ["nul", "{\"data\":{\"title\":\"a\\u0000b\"},\"key\":\"a\\u0000b\"}"],
  ["lone surrogate", "{\"data\":{\"title\":\"\\ud800\"},\"on\":\"\\udc00\"}"], ["rows junk", "{\"rows\":[null,1,\"x\",[],{\"data\":{}}],\"keys\":[{},null,1]}"],
  ["retention junk", "{\"maxRows\":1e308,\"maxAgeDays\":-0}"], ["many keys", JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])))],
  ["wide data", JSON.stringify({ data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])) })],
  ["long string", JSON.stringify({ data: { title: "x".repeat(900_000) } })],
  ["over the cap", JSON.stringify({ data: { s: "x".repeat(1_100_000) } })],
  ["batch of nothing", JSON.stringify({ rows: Array.from({ length: 100 }, () => ({ data: null })) })],
];

const TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1", "application/vnd.api+json", "application/json, text/html", ""];

function qs(q: unknown): string {
  return `?q=${encodeURIComponent(typeof q === "string" ? q : JSON.stringify(q))}`;
}

const QUERIES = [
  qs({ where: [{ field: "n) OR 1=1 --", op: "eq", value: 1 }] }),
  qs({ where: [{ field: "title", op: "eq", value: "' OR '1'='1" }] }),
  qs({ where: [{ field: "title", op: "in", value: ["%", "_", "\\", "\u0000", "'); DROP TABLE _svc_rows; --"] }] }),
  qs({ where: [{ field: "title", op: "eq", value: "x".repeat(7_000) }] }),
  qs({ where: [{ field: "score", op: "gt", value: -1e308 }, { field: "score", op: "lt", value: 1e308 }] }),
  qs({ where: [{ field: "n", op: "eq", value: -0 }] }),
  qs({ where: Array.from({ length: 20 }, (_, i) => ({ field: "title", op: "notIn", value: Array.from({ length: 100 }, (_, j) => `v${i}-${j}`) })) }),
  qs({ where: [{ field: "__proto__", op: "eq", value: 1 }] }),
  qs({ where: [{ field: "constructor", op: "eq", value: 1 }] }),
  qs({ sort: [{ field: "title", dir: "desc" }, { field: "n" }, { field: "score", dir: "desc" }, { field: "done" }] }),
  qs({ sort: [{ field: "title", dir: "desc; DROP TABLE x" }] }),
  qs({ where: { length: 1, 0: { field: "n", op: "eq", value: 1 } } }),
  qs({ where: [{ field: "n", op: "eq", value: { toString: 1 } }] }),
  qs("{\"where\":[{\"field\":\"title\",\"op\":\"eq\",\"value\":\"\\ud800\"}]}"),
  qs("{\"__proto__\":{\"where\":[]}}"),
  qs("1e999"), qs("{\"where\":" + "[".repeat(3000) + "]".repeat(3000) + "}"),
  "?q=%ff", "?q=%", "?q=%E0%A4%A", "?q=&q=%7B%7D", "?limit=1&limit=2", "?limit=%00", "?limit=1e3", "?limit=0x10", "?limit=Infinity",
  "?since=%ff", "?since=%00", "?since=" + "A".repeat(2000), "?since=eyJzIjoiIiwidiI6W10sInIiOjF9&since=x", "?unknown=1",
  `?since=${btoa("{\"s\":\"\",\"v\":[],\"r\":1}")}`, `?since=${btoa("{\"s\":\"\",\"v\":[],\"r\":9007199254740992}")}`,
];

const DELETED_QUERIES = ["?before=%ff", "?before=%00", "?before=~", "?before=x~1", "?before=2024-01-01T00:00:00.000Z~-1", "?limit=1&before=" + "9".repeat(64), "?limit=abc", "?before=&limit="];

const FEED_QUERIES = [
  "since=0&wait=0.001", "since=0&wait=1e-9", "since=0&limit=1e3", "since=0x10", "since=%ff", "since=0&since=1", "since=0&wait=NaN", "since=0&wait=Infinity",
  "since=0&limit=Infinity", "since=-0", "since=+1", "since=1e2", "since= 1", "since=0&collection=tasks", "since=00000000000000000000001",
];

describe("hostile input", () => {
  it("every route × hostile collection names and keys: never a 500, always the catalogue envelope", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "keep" }, { key: "k" });
    const requests: Sent[] = [];
    for (const collection of COLLECTIONS) {
      for (const [method, path, opts] of routes(ctx, collection, "k")) requests.push({ label: `${method} ${path}`, path, opts: { method, ...opts } });
    }
    for (const key of KEYS) {
      for (const [method, path, opts] of routes(ctx, "tasks", key).slice(7)) requests.push({ label: `${method} ${path}`, path, opts: { method, ...opts } });
    }
    await sweep(requests, (p, o) => ctx.agentCall(p, o));
    // The store still answers queries over what is left.
    await ctx.list("tasks", { q: { sort: [{ field: "title" }] } });
    expect(await ctx.sql((sql) => sql.exec("SELECT count(*) AS n FROM _svc_rows WHERE collection NOT IN ('tasks')").one().n)).toBe(0);
  });

  it("every body route × hostile bodies and media types: never a 500", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "keep" }, { key: "k" });
    await ctx.create("tasks", { title: "gone" }, { key: "d" });
    await ctx.remove("tasks", "d");
    const before = await ctx.snapshot();
    const targets: Array<[string, string]> = [
      ["POST", ctx.path("tasks")], ["PATCH", ctx.path("tasks", "/k")], ["DELETE", ctx.path("tasks", "/k")], ["POST", ctx.path("tasks", "/batch")],
      ["DELETE", ctx.path("tasks", "/batch")], ["PATCH", ctx.path("tasks", "/retention")], ["POST", ctx.path("tasks", "/d/restore")],
      ["DELETE", ctx.path("tasks", "/k/purge")],
    ];
    const requests: Sent[] = [];
    for (const [method, path] of targets) {
      for (const [label, body] of BODIES) requests.push({ label: `${method} ${path} ${label}`, path, opts: { method, body, contentType: "application/json" } });
      for (const type of TYPES) requests.push({ label: `${method} ${path} as ${type}`, path, opts: { method, body: "{\"data\":{}}", contentType: type } });
    }
    const statuses = await sweep(requests.filter((r) => !(r.opts.method === "DELETE" && r.path.endsWith("/purge"))), (p, o) => ctx.agentCall(p, o));
    expect(statuses[413]).toBeGreaterThan(0);
    // No hostile body created or destroyed a row (an empty body may legitimately soft-delete or restore one).
    const after = await ctx.snapshot();
    expect((after.rows as Array<{ key: string }>).map((r) => r.key)).toEqual((before.rows as Array<{ key: string }>).map((r) => r.key));
    expect((after.rows as Array<{ data: string }>).map((r) => JSON.parse(r.data))).toEqual([row.data, { title: "gone" }]);
  });

  it("hostile list, deleted-list and feed queries: never a 500", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "a", n: 1, score: 1.5, done: true });
    await ctx.create("free", { title: "b" });
    const requests: Sent[] = [];
    for (const q of QUERIES) {
      requests.push({ label: `list tasks ${q.slice(0, 120)}`, path: ctx.path("tasks", q), opts: {} });
      requests.push({ label: `list free ${q.slice(0, 120)}`, path: ctx.path("free", q), opts: {} });
    }
    for (const q of DELETED_QUERIES) requests.push({ label: `deleted ${q}`, path: ctx.path("tasks", `/deleted${q}`), opts: {} });
    for (const q of FEED_QUERIES) requests.push({ label: `feed ${q}`, path: ctx.feedPath(q), opts: {} });
    await sweep(requests, (p, o) => ctx.agentCall(p, o));
    await sweep(requests.slice(0, 12), (p, o) => ctx.ownerCall(p, o));
    expect((await ctx.list("tasks")).rows).toHaveLength(1);
    expect(await ctx.sql((sql) => sql.exec("SELECT count(*) AS n FROM _svc_rows").one().n)).toBe(2);
  });

  it("hostile credentials: 401 or 403 envelopes, never a 500, nothing written", async () => {
    const ctx = await setup();
    const before = await ctx.snapshot();
    const path = ctx.path("tasks");
    const requests: Sent[] = [
      { label: "empty bearer", path, opts: { authorization: "Bearer " } },
      { label: "basic", path, opts: { authorization: "Basic dXNlcjpwYXNz" } },
      { label: "garbage bearer", path, opts: { authorization: "Bearer %ff%fe\t" } },
      { label: "long bearer", path, opts: { authorization: `Bearer ${"svc_".padEnd(10_000, "a")}` } },
      { label: "wrong key", path, opts: { key: `svc_${"0".repeat(32)}`, json: { data: { title: "x" } } } },
      { label: "garbage session", path, opts: { session: "sess_nope", json: { data: { title: "x" } } } },
      { label: "session without origin", path, opts: { session: ctx.human.session, origin: null, json: { data: { title: "x" } } } },
      { label: "session, foreign origin", path, opts: { session: ctx.human.session, origin: "http://evil.example", json: { data: { title: "x" } } } },
      { label: "cookie soup", path, opts: { headers: { cookie: "relay_session=; relay_session=%ff; a=b" } } },
      { label: "no credential", path, opts: { json: { data: { title: "x" } } } },
      { label: "feed, no credential", path: ctx.feedPath("since=0&wait=5"), opts: {} },
    ];
    const statuses = await sweep(requests, (p, o) => call(p, o));
    expect(Object.keys(statuses).every((s) => ["401", "403"].includes(s))).toBe(true);
    expect(await ctx.snapshot()).toEqual(before);
  });
});
