// Fuzzing every /v1 route's query string, path parameters and headers (issue 16): the
// routes and their documented query parameters come from the relay's own
// /v1/openapi.json, so a route added later is fuzzed too. Each case keeps the owner's own
// ids in the path but may put a hostile segment in one parameter, gives the documented
// query parameters hostile values (plus a stray one, a repeated one and a
// prototype-pollution key), and sends hostile values in the headers the relay reads. Every
// answer must be a success or a catalogue error envelope with a 4xx, never a 5xx (but the
// documented 503 of the identity-provider routes on a relay without one); and the
// app's one row is unchanged at the end. Routes that end sessions, keys or apps are left to
// their own tests. CI runs 10 cases per route; for a longer run by hand raise RUNS (100
// per route, 14,800 requests over 148 routes, found nothing on 2026-11-26).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { badAnswer, DESTRUCTIVE, fuzzTarget } from "./fuzz-target";

type Obj = Record<string, any>;

const RUNS = 10;

/** Query values and path segments, already percent-encoded as a client would put them in a URL (some of them wrongly). */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.constantFrom(
    "", "%20", "-1", "0", "1.5", "1e309", "NaN", "Infinity", "99999999999999999999999", "true", "null", "undefined",
    "%00", "%2F", "%2e%2e", "..", "%", "%E0%A4%A", "%ED%A0%80", "%FF%FE", "x".repeat(4_000),
    encodeURIComponent("<script>alert(1)</script>"), encodeURIComponent("💥"), encodeURIComponent('{"$gt":""}'), encodeURIComponent("[1,2]"),
    "app_00000000000000000000000000", "__proto__", "constructor",
  ),
);

/** Header values a client could send (the runtime refuses control characters in headers itself). */
const hostileHeader: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40, unit: fc.constantFrom(..."abcXYZ019 -_.,;:=\"'*/\\<>{}[]()".split("")) }),
  fc.constantFrom("", "-1", "0", "99999999999999999999", "W/\"1\"", "*", "1, 2", "x".repeat(4_000), "application/json; charset=latin1", "text/plain"),
);

/** The headers the relay reads on a request, beyond the agent key. */
const HEADERS = ["if-match", "idempotency-key", "x-service-cli-version", "content-type", "accept", "x-forwarded-for", "last-event-id"];

interface Case {
  /** Which path parameter gets the hostile segment (an index into the route's), or -1 for none. */
  pathAt: number;
  segment: string;
  query: Record<string, string | undefined>;
  stray: string;
  headers: Record<string, string | undefined>;
}

/** A DELETE always carries a hostile segment, so it never removes the owner's real app or row. */
function cases(queryNames: string[], pathNames: number, method: string): fc.Arbitrary<Case> {
  return fc.record({
    pathAt: fc.integer({ min: method === "DELETE" ? 0 : -1, max: pathNames - 1 }),
    segment: hostileText,
    query: fc.record(Object.fromEntries(queryNames.map((name) => [name, hostileText])), { requiredKeys: [] }),
    stray: hostileText,
    headers: fc.record(Object.fromEntries(HEADERS.map((name) => [name, hostileHeader])), { requiredKeys: [] }),
  }) as fc.Arbitrary<Case>;
}

/** The URL of a case: the owner's ids in the path, one parameter maybe replaced; hostile query values, a stray and a repeated one. */
function urlOf(path: string, fill: (path: string) => string, test: Case, queryNames: string[]): string {
  let index = -1;
  const withSegment = path.replace(/\{([A-Za-z_]+)\}/g, (whole) => (++index === test.pathAt ? (test.segment === "" ? "%20" : test.segment) : whole));
  const params = Object.entries(test.query)
    // A long-poll's wait is held at 0, so a case never waits on the clock.
    .map(([name, value]) => `${name}=${name === "wait" ? "0" : value ?? ""}`);
  if (queryNames.includes("wait") && !("wait" in test.query)) params.push("wait=0");
  const repeated = queryNames.find((name) => name !== "wait");
  if (repeated) params.push(`${repeated}=${test.stray}`);
  params.push(`stray=${test.stray}`, `__proto__[polluted]=1`);
  return `${fill(withSegment)}?${params.join("&")}`;
}

describe("every route × hostile query strings, path parameters and headers", { timeout: 240_000 }, () => {
  it("answers a success or a 4xx catalogue envelope, never a 5xx, and changes no row", async () => {
    const { key, appId, rowKey, spec, fill } = await fuzzTarget();
    const rowPath = `/v1/apps/${appId}/collections/notes/${rowKey}`;
    const before = await json<Obj>(await call(rowPath, { key }), 200);
    const routes = Object.entries(spec.paths).flatMap(([path, methods]) => Object.entries(methods)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .filter(([method]) => method === "get" || !DESTRUCTIVE.test(path))
      .filter(([method]) => method !== "delete" || /\{[A-Za-z_]+\}/.test(path))
      // Upgrades to a socket or a stream are the live tests' own.
      .filter(([, operation]) => !/stream|socket|websocket/i.test(`${path} ${operation.summary ?? ""}`))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        queryNames: ((operation.parameters ?? []) as Obj[]).filter((p) => p.in === "query").map((p) => String(p.name)),
        pathNames: [...path.matchAll(/\{[A-Za-z_]+\}/g)].length,
      })));
    expect(routes.length).toBeGreaterThan(80);
    expect(routes.some((route) => route.queryNames.length > 0)).toBe(true);

    const failures: string[] = [];
    for (const route of routes) {
      await fc.assert(fc.asyncProperty(cases(route.queryNames, route.pathNames, route.method), async (test) => {
        const url = urlOf(route.path, fill, test, route.queryNames);
        const headers = Object.fromEntries(Object.entries(test.headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
        const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
        const res = await call(url, { key, method: route.method, headers: { ...headers, ...(body ? { "content-type": headers["content-type"] ?? "application/json" } : {}) }, body });
        const problem = badAnswer(res.status, await res.text(), route.path, route.path.startsWith("/v1/auth/idp") ? ["auth_provider_unavailable"] : []);
        if (problem) failures.push(`${route.method} ${url.slice(0, 300)} → ${problem}`);
      }), { numRuns: RUNS });
    }
    expect(failures).toEqual([]);
    // The app's row is as it was: a refused or odd call changed nothing it should not.
    const after = await json<Obj>(await call(rowPath, { key }), 200);
    expect(after.row?.data ?? after.data).toEqual(before.row?.data ?? before.data);
    expect(({} as Obj).polluted).toBeUndefined();
    console.log(`route fuzz (query, path, headers): ${routes.length} routes × ${RUNS} cases`);
  });
});
