// The pure half of a delivery (src/effects/ingest/mapping.ts): dot-paths through objects and
// arrays, map with unresolved and explicit-null fields, dedupe values (scalars only, numbers
// and booleans as text, headers case-insensitive, none in a backfill), if_match readings and
// the handshake challenge.
import { describe, expect, it } from "vitest";
import { challengeOf, dedupeValue, ifMatchOf, mapBody, resolvePath } from "../../../src/effects/ingest/mapping";

describe("ingest mapping", () => {
  const body = { a: { b: [{ id: 7 }, { id: "x" }], n: null, t: true }, "if_match": 3, challenge: "c" };

  it("resolves dot-paths", () => {
    expect(resolvePath(body, "a.b.1.id")).toEqual({ found: true, value: "x" });
    expect(resolvePath(body, "a.n")).toEqual({ found: true, value: null });
    for (const path of ["a.b.2.id", "a.b.01.id", "a.b.x", "a.missing", "a.t.deeper", "constructor"]) expect(resolvePath(body, path)).toEqual({ found: false });
  });

  it("maps fields, leaving unresolved ones out and writing null as null; no map keeps the whole body", () => {
    expect(mapBody({ name: "h", map: { first: "a.b.0.id", none: "a.n", gone: "a.zz" } }, body, "T")).toEqual({ first: 7, none: null });
    expect(mapBody({ name: "h", map: null }, [1], "T")).toEqual({ hook: "h", payload: [1], receivedAt: "T" });
  });

  it("finds dedupe values", () => {
    const headers = new Headers({ "X-Delivery": "d1" });
    expect(dedupeValue({ dedupeKey: { kind: "path", path: "a.b.0.id" } }, body, null)).toBe("7");
    expect(dedupeValue({ dedupeKey: { kind: "path", path: "a.t" } }, body, null)).toBe("true");
    expect(dedupeValue({ dedupeKey: { kind: "path", path: "a.b" } }, body, null)).toBeNull();
    expect(dedupeValue({ dedupeKey: { kind: "path", path: "a.n" } }, body, null)).toBeNull();
    expect(dedupeValue({ dedupeKey: { kind: "header", header: "x-delivery" } }, body, headers)).toBe("d1");
    expect(dedupeValue({ dedupeKey: { kind: "header", header: "x-delivery" } }, body, null)).toBeNull();
    expect(dedupeValue({ dedupeKey: null }, body, headers)).toBeNull();
  });

  it("reads if_match only for upsert rules", () => {
    expect(ifMatchOf({ mode: "upsert" }, body)).toEqual({ ok: true, value: 3 });
    expect(ifMatchOf({ mode: "append" }, { if_match: "x" })).toEqual({ ok: true, value: undefined });
    expect(ifMatchOf({ mode: "upsert" }, { t: 1 })).toEqual({ ok: true, value: undefined });
    for (const bad of [-1, 1.5, "2", null]) expect(ifMatchOf({ mode: "upsert" }, { if_match: bad })).toEqual({ ok: false });
  });

  it("finds a handshake challenge", () => {
    expect(challengeOf(body)).toBe("c");
    expect(challengeOf({ challenge: 5 })).toBeNull();
    expect(challengeOf(["challenge"])).toBeNull();
  });
});
