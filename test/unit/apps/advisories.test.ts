// Advisories (src/apps/advisories.ts; WIRE §2.2 GET /v1/apps/advisories): which
// permission lists expose a collection, how badly for the app's visibility, worst first.
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../../src/manifest";
import { advisoriesFor, highestSeverity } from "../../../src/apps/advisories";

type Obj = Record<string, unknown>;

function compiled(collections: Record<string, Obj>) {
  const full: Record<string, Obj> = {};
  for (const [name, c] of Object.entries(collections)) full[name] = { read: ["owner"], write: ["owner"], delete: ["owner"], ...c };
  return parseManifest({ $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name: "T" }, collections: full } });
}

const codes = (list: ReturnType<typeof advisoriesFor>) => list.map((a) => [a.code, a.collection, a.severity]);

describe("advisoriesFor", () => {
  it("an owner-only manifest has none, whatever the visibility", () => {
    for (const v of ["private", "link", "public"] as const) expect(advisoriesFor(compiled({ notes: {} }), v)).toEqual([]);
  });

  it("read: anyone is high on a public app, medium on a link app, nothing on a private app", () => {
    const m = compiled({ notes: { read: ["anyone"] } });
    expect(codes(advisoriesFor(m, "public"))).toEqual([["world_readable", "notes", "high"]]);
    expect(codes(advisoriesFor(m, "link"))).toEqual([["world_readable", "notes", "medium"]]);
    expect(advisoriesFor(m, "private")).toEqual([]);
    expect(advisoriesFor(m, "public")[0].message).toMatch(/public app.*"notes"/);
  });

  it("row-scoped anyone reads are not world-readable", () => {
    const m = compiled({ notes: { read: ["anyone:creator"], write: ["anyone"], update: ["creator"], anonWriteBudget: { perIpPerDay: 5, perAppPerDay: 100 } } });
    expect(advisoriesFor(m, "public")).toEqual([]);
  });

  it("anonymous writes without a budget are high on open apps", () => {
    const m = compiled({ guestbook: { write: ["anyone"], update: [] } });
    expect(codes(advisoriesFor(m, "public"))).toEqual([["anonymous_writes_unbudgeted", "guestbook", "high"]]);
    expect(codes(advisoriesFor(m, "link"))).toEqual([["anonymous_writes_unbudgeted", "guestbook", "high"]]);
    expect(advisoriesFor(m, "private")).toEqual([]);
    const budgeted = compiled({ guestbook: { write: ["anyone"], update: [], anonWriteBudget: { perIpPerDay: 5, perAppPerDay: 100 } } });
    expect(advisoriesFor(budgeted, "public")).toEqual([]);
  });

  it("anyone updating or deleting every row is medium (even on a private app); append-only collections are exempt", () => {
    const m = compiled({ board: { read: ["member"], write: ["member"], update: ["anyone"], delete: ["anyone"] } });
    expect(codes(advisoriesFor(m, "private"))).toEqual([
      ["anyone_updates_every_row", "board", "medium"], ["anyone_deletes_every_row", "board", "medium"],
    ]);
  });

  it("count wider than read is low", () => {
    const m = compiled({ votes: { read: ["owner"], countRead: ["anyone"] } });
    expect(codes(advisoriesFor(m, "private"))).toEqual([["count_wider_than_read", "votes", "low"]]);
    expect(advisoriesFor(compiled({ votes: { read: ["anyone"], countRead: ["anyone"] } }), "private")).toEqual([]);
  });

  it("worst first, then by collection name", () => {
    const m = compiled({
      zeta: { read: ["anyone"] },
      alpha: { countRead: ["anyone"] },
      beta: { read: ["anyone"] },
      gamma: { update: ["anyone"] },
    });
    expect(codes(advisoriesFor(m, "public"))).toEqual([
      ["world_readable", "beta", "high"], ["world_readable", "zeta", "high"],
      ["anyone_updates_every_row", "gamma", "medium"], ["count_wider_than_read", "alpha", "low"],
    ]);
    expect(highestSeverity(advisoriesFor(m, "public"))).toBe("high");
    expect(highestSeverity(advisoriesFor(m, "private"))).toBe("medium");
    expect(highestSeverity([])).toBeNull();
  });
});
