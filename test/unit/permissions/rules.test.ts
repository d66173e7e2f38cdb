// The rules beside the subject matrix: writer-set relations, immutable fields, appendOnly
// with except, countRead, anonymous budgets and bot challenges, keyClaim, grant pins, the
// list filter's shape, the credential allowlist, refusal details and row stamps.
import { describe, expect, it } from "vitest";
import {
  anonBudgetExceeded, authorize, authorOf, roleAccess, identityOf, machineAuthor, matchesCond, matchesFilter,
  type Decision, type Op, type Principal, type RowContext,
} from "../../../src/permissions";
import { compile, PRINCIPALS as P, row, STRANGER } from "./fixtures";

const T = "tasks";

function code<O extends Op>(d: Decision<O>): string {
  return d.ok ? "ok" : d.code;
}

function allowed<O extends Op>(d: Decision<O>): Extract<Decision<O>, { ok: true }> {
  if (!d.ok) throw new Error(`expected ok, got ${d.code}`);
  return d as Extract<Decision<O>, { ok: true }>;
}

const plain = P.member;
const byPlain = (data: Record<string, unknown> = {}) => row({ creator: authorOf(plain), editor: authorOf(plain), data });

describe("collections and rows that do not exist", () => {
  const m = compile({ read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["anyone"] });
  const ops: [Op, object][] = [
    ["list", {}], ["count", {}], ["get", { row: row() }], ["create", { data: {} }], ["update", { row: row(), data: {} }],
    ["delete", { row: row() }], ["purge", { row: row() }], ["restore", { row: row() }], ["listDeleted", {}],
  ];
  for (const [op, ctx] of ops) {
    it(`${op} on an undeclared collection → collection_not_found, for the owner and the anonymous alike`, () => {
      for (const p of [P.owner, P.anonymous] as Principal[]) {
        const d = authorize(m, p, op, { collection: "nope", ...ctx } as never);
        expect(code(d)).toBe("collection_not_found");
        if (!d.ok) expect(d.error.details).toEqual({ collection: "nope" });
      }
    });
  }

  it("an own property of Object.prototype is not a collection", () => {
    expect(code(authorize(m, P.owner, "list", { collection: "constructor" }))).toBe("collection_not_found");
  });

  it("get, update and delete of a missing row → row_not_found, with no details", () => {
    for (const d of [
      authorize(m, P.owner, "get", { collection: T, row: null }),
      authorize(m, P.owner, "update", { collection: T, row: null, data: {} }),
      authorize(m, P.owner, "delete", { collection: T, row: null }),
      authorize(m, P.owner, "purge", { collection: T, row: null }),
      authorize(m, P.owner, "restore", { collection: T, row: null }),
    ]) {
      expect(code(d)).toBe("row_not_found");
      if (!d.ok) {
        expect(d.error.details).toBeUndefined();
        expect(d.error.status).toBe(404);
      }
    }
  });

  it("purge and restore by a non-owner answer 403 without looking for the row", () => {
    expect(code(authorize(m, P.member, "purge", { collection: T, row: null }))).toBe("purge_forbidden");
    expect(code(authorize(m, P.member, "restore", { collection: T, row: null }))).toBe("forbidden");
  });

  it("a hidden row and a missing row give the same refusal", () => {
    const hidden = compile({ read: ["creator"], write: ["member"], delete: ["member"] });
    const a = authorize(hidden, P.member, "update", { collection: T, row: row(), data: {} });
    const b = authorize(hidden, P.member, "update", { collection: T, row: null, data: {} });
    expect(a).toEqual(b);
  });
});

describe("relations with set: writer", () => {
  const m = compile({
    relations: { assignee: { field: "assignee_id", set: "writer" }, reviewer: { field: "reviewer_id", set: "caller" } },
    read: ["anyone"], write: ["owner", "member"], update: ["owner", "member"], delete: ["owner"],
  });
  const current = byPlain({ assignee_id: "hum_a", reviewer_id: "hum_r" });
  const upd = (p: Principal, data: Record<string, unknown>, r: RowContext = current) =>
    code(authorize(m, p, "update", { collection: T, row: r, data }));

  it("the row's creator may change the writer-set field", () => {
    expect(upd(plain, { title: "t", status: "open", assignee_id: "hum_b", reviewer_id: "hum_r" })).toBe("ok");
  });
  it("someone else may not → relation_set_forbidden", () => {
    expect(upd(P.memberStaff, { title: "t", status: "open", assignee_id: "hum_b", reviewer_id: "hum_r" })).toBe("relation_set_forbidden");
  });
  it("not even the owner, when the owner did not create the row", () => {
    expect(upd(P.owner, { title: "t", status: "open", assignee_id: "hum_b", reviewer_id: "hum_r" })).toBe("relation_set_forbidden");
  });
  it("removing the value is a change too", () => {
    expect(upd(P.memberStaff, { title: "t", status: "open", reviewer_id: "hum_r" })).toBe("relation_set_forbidden");
  });
  it("someone else may change the other fields, the writer-set one echoed unchanged", () => {
    expect(upd(P.memberStaff, { title: "new", status: "done", assignee_id: "hum_a", reviewer_id: "hum_r" })).toBe("ok");
  });
  it("a caller-set relation may be changed by anyone who may update", () => {
    expect(upd(P.memberStaff, { title: "t", status: "open", assignee_id: "hum_a", reviewer_id: "hum_x" })).toBe("ok");
  });
  it("the refusal names the relation and the field", () => {
    const d = authorize(m, P.memberStaff, "update", { collection: T, row: current, data: { assignee_id: "x" } });
    expect(d.ok ? null : { code: d.code, details: d.error.details, status: d.error.status }).toEqual({
      code: "relation_set_forbidden", details: { relation: "assignee", field: "assignee_id" }, status: 403,
    });
  });
  it("a caller outside the update list hears collection_write_forbidden first", () => {
    expect(upd(P.grantStaff, { assignee_id: "hum_b" })).toBe("collection_write_forbidden");
  });
  it("a row hidden from the caller stays row_not_found", () => {
    const hidden = compile({
      relations: { assignee: { field: "assignee_id", set: "writer" } },
      read: ["creator"], write: ["member"], delete: ["member"],
    });
    expect(code(authorize(hidden, P.memberStaff, "update", { collection: T, row: current, data: { assignee_id: "x" } }))).toBe("row_not_found");
  });
});

describe("immutable fields", () => {
  const m = compile({ read: ["anyone"], write: ["owner", "member"], delete: ["owner"], immutable: ["ref"] });
  const current = byPlain({ ref: "R-1" });
  const upd = (p: Principal, data: Record<string, unknown>, r = current) => authorize(m, p, "update", { collection: T, row: r, data });

  it("changing the value → invalid_request naming the field", () => {
    const d = upd(plain, { title: "t", ref: "R-2" });
    expect(d.ok ? null : { code: d.code, status: d.error.status, details: d.error.details }).toEqual({
      code: "invalid_request", status: 400, details: { field: "ref" },
    });
  });
  it("for every caller, the owner included", () => {
    expect(code(upd(P.owner, { ref: "R-2" }))).toBe("invalid_request");
    expect(code(upd(P.agent, { ref: "R-2" }))).toBe("invalid_request");
  });
  it("an unchanged echo is fine", () => expect(code(upd(plain, { title: "x", ref: "R-1" }))).toBe("ok"));
  it("omitting it carries it forward", () => expect(code(upd(plain, { title: "x" }))).toBe("ok"));
  it("setting it when it was absent is a change", () => expect(code(upd(plain, { ref: "R-9" }, byPlain()))).toBe("invalid_request"));
  it("structured values compare by content, not key order", () => {
    const mm = compile({ schema: undefined, read: ["anyone"], write: ["owner"], delete: ["owner"], immutable: ["meta"], relations: undefined });
    const r = row({ data: { meta: { a: 1, b: [1, 2] } } });
    expect(code(authorize(mm, P.owner, "update", { collection: T, row: r, data: { meta: { b: [1, 2], a: 1 } } }))).toBe("ok");
    expect(code(authorize(mm, P.owner, "update", { collection: T, row: r, data: { meta: { a: 1, b: [2, 1] } } }))).toBe("invalid_request");
  });
  it("a serverSet lookup's keyField is immutable too", () => {
    const mm = compile({ read: ["anyone"], write: ["owner"], delete: ["owner"], serverSet: { note: { from: "other", keyField: "ref", take: "title" } } });
    expect(mm.collections.tasks.immutable).toContain("ref");
    const r = row({ data: { ref: "o1", note: "x" } });
    expect(code(authorize(mm, P.owner, "update", { collection: T, row: r, data: { ref: "o2", note: "x" } }))).toBe("invalid_request");
  });
});

describe("appendOnly", () => {
  const strict = compile({ read: ["anyone"], write: ["owner", "member"], delete: ["owner", "member"], appendOnly: true });
  const except = compile({ read: ["anyone"], write: ["owner", "member"], delete: ["owner", "member"], appendOnly: { except: ["owner"] } });
  const memberOnly = compile({ read: ["anyone"], write: ["member"], delete: ["member"], appendOnly: { except: ["owner"] } });
  const hidden = compile({ read: ["creator"], write: ["member"], delete: ["member"], appendOnly: true });
  const r = byPlain();
  const upd = (m: typeof strict, p: Principal, rr = r) => code(authorize(m, p, "update", { collection: T, row: rr, data: { title: "x" } }));
  const del = (m: typeof strict, p: Principal, rr = r) => code(authorize(m, p, "delete", { collection: T, row: rr }));

  it("refuses update and delete for everyone, the owner included", () => {
    for (const p of [P.owner, P.agent, plain, P.credAll] as Principal[]) {
      expect(upd(strict, p)).toBe("append_only");
      expect(del(strict, p)).toBe("append_only");
    }
  });
  it("still lets rows be created", () => expect(code(authorize(strict, plain, "create", { collection: T, data: {} }))).toBe("ok"));
  it("except owner: the owner, the agent and the owner's credential may update and delete", () => {
    for (const p of [P.owner, P.agent, P.credAll] as Principal[]) {
      expect(upd(except, p)).toBe("ok");
      expect(del(except, p)).toBe("ok");
    }
  });
  it("except owner: members still may not", () => {
    expect(upd(except, plain)).toBe("append_only");
    expect(del(except, plain)).toBe("append_only");
  });
  it("except owner does not add the owner to the lists", () => {
    expect(upd(memberOnly, P.owner)).toBe("ok"); // owner ⇒ member
    expect(upd(memberOnly, P.grantStaff)).toBe("append_only");
  });
  it("is checked before the lists: a caller outside the delete list hears append_only", () => {
    expect(del(strict, P.grantStaff)).toBe("append_only");
  });
  it("never confirms a hidden row", () => {
    expect(upd(hidden, P.memberStaff)).toBe("row_not_found");
    expect(del(hidden, P.memberStaff)).toBe("row_not_found");
    expect(upd(hidden, plain)).toBe("append_only");
  });
  it("purge bypasses it", () => expect(code(authorize(strict, P.owner, "purge", { collection: T, row: r }))).toBe("ok"));
});

describe("countRead", () => {
  it("not declared → collection_count_forbidden for everyone, the owner included", () => {
    const m = compile({ read: ["anyone"] });
    for (const p of [P.owner, P.agent, plain, P.anonymous] as Principal[]) {
      const d = authorize(m, p, "count", { collection: T });
      expect(code(d)).toBe("collection_count_forbidden");
      if (!d.ok) expect(d.error.details).toEqual({ collection: T, allowed: null });
    }
  });
  it("an empty list admits nobody", () => {
    expect(code(authorize(compile({ countRead: [] }), P.owner, "count", { collection: T }))).toBe("collection_count_forbidden");
  });
  it("is independent of read in both directions", () => {
    const countOnly = compile({ read: [], countRead: ["anyone"] });
    expect(code(authorize(countOnly, P.anonymous, "count", { collection: T }))).toBe("ok");
    expect(code(authorize(countOnly, P.anonymous, "list", { collection: T }))).toBe("collection_read_forbidden");
    const readOnly = compile({ read: ["anyone"], countRead: ["owner"] });
    expect(code(authorize(readOnly, P.anonymous, "list", { collection: T }))).toBe("ok");
    expect(code(authorize(readOnly, P.anonymous, "count", { collection: T }))).toBe("collection_count_forbidden");
  });
  it("counts every row, except that a pinned grant counts only its pin", () => {
    const m = compile({ countRead: ["staff"] });
    expect(allowed(authorize(m, P.memberLead, "count", { collection: T })).filter).toEqual({ all: true });
    expect(allowed(authorize(m, P.grantStaff, "count", { collection: T })).filter).toEqual({ all: true });
    expect(allowed(authorize(m, P.grantPinKeyIn, "count", { collection: T })).filter).toEqual({
      all: false, anyOf: null, allOf: [{ kind: "key", equals: "row1" }],
    });
  });
  it("a credential needs read in its allowlist", () => {
    const m = compile({ countRead: ["owner"] });
    expect(code(authorize(m, P.credRead, "count", { collection: T }))).toBe("ok");
    expect(code(authorize(m, P.credNoOps, "count", { collection: T }))).toBe("credential_scope_forbidden");
  });
  it("row-scoped subjects are refused by the manifest", () => {
    expect(() => compile({ countRead: ["staff:own"] })).toThrowError(expect.objectContaining({ code: "permission_role_invalid" }));
  });
});

describe("anonymous writes: budget and bot challenge", () => {
  const budget = { perIpPerDay: 5, perAppPerDay: 100 };
  const guarded = compile({ read: ["anyone"], write: ["anyone", "member", "staff"], update: ["anyone"], anonWriteBudget: budget, antiAbuse: "turnstile" });
  const anyoneOnly = compile({ read: ["anyone"], write: ["anyone"], update: ["creator"], anonWriteBudget: budget, antiAbuse: "challenge" });
  const open = compile({ read: ["anyone"], write: ["anyone"], update: ["creator"] });
  const checks = (m: typeof open, p: Principal) => allowed(authorize(m, p, "create", { collection: T, data: {} })).checks;

  it("an anonymous writer counts against the budget (by address) and needs a challenge", () => {
    expect(checks(guarded, P.anonymous)).toEqual({ anonBudget: { ...budget, ip: "203.0.113.7" }, challenge: true });
  });
  it("so does a visitor", () => {
    expect(checks(guarded, P.visitor)).toEqual({ anonBudget: { ...budget, ip: "203.0.113.9" }, challenge: true });
  });
  it("members, the owner, the agent and delegates never do", () => {
    for (const p of [plain, P.memberStaff, P.owner, P.agent, P.credAll, P.leaseWrite] as Principal[]) {
      expect(checks(guarded, p)).toEqual({ anonBudget: null, challenge: false });
    }
  });
  it("a grant holder admitted by its role does not; one admitted only through anyone does", () => {
    expect(checks(guarded, P.grantStaff)).toEqual({ anonBudget: null, challenge: false });
    expect(checks(anyoneOnly, P.grantStaff)).toEqual({ anonBudget: { ...budget, ip: null }, challenge: true });
  });
  it("a collection without anonWriteBudget or antiAbuse asks for nothing", () => {
    expect(checks(open, P.anonymous)).toEqual({ anonBudget: null, challenge: false });
  });
  it("anonymous updates count too", () => {
    const d = authorize(guarded, P.anonymous, "update", { collection: T, row: row(), data: {} });
    expect(allowed(d).checks).toEqual({ anonBudget: { ...budget, ip: "203.0.113.7" }, challenge: true });
  });
  it("the spent-budget refusal is 409 with details.scope", () => {
    const e = anonBudgetExceeded("notes", "perAppPerDay", 3);
    expect({ code: e.code, status: e.status, details: e.details }).toEqual({ code: "anon_write_budget_exceeded", status: 409, details: { scope: "perAppPerDay", limit: 3 } });
  });
});

describe("keyClaim", () => {
  const make = (keyClaim: string) => compile({ read: ["anyone"], write: ["anyone"], update: ["creator"], keyClaim });
  const create = (m: ReturnType<typeof make>, p: Principal, key?: string) => authorize(m, p, "create", { collection: T, key, data: {} });

  it("free: the caller's key passes through, or the server mints one", () => {
    expect(allowed(create(make("free"), plain, "k1")).key).toBe("k1");
    expect(allowed(create(make("free"), plain)).key).toBeNull();
  });
  it("server: a caller-supplied key is refused", () => {
    expect(code(create(make("server"), plain, "k1"))).toBe("collection_write_forbidden");
    expect(allowed(create(make("server"), plain)).key).toBeNull();
  });
  it("caller: the key is the writer's identity", () => {
    expect(allowed(create(make("caller"), plain)).key).toBe("hum_plain");
    expect(allowed(create(make("caller"), plain, "hum_plain")).key).toBe("hum_plain");
    expect(allowed(create(make("caller"), P.visitor)).key).toBe("vis_1");
    expect(code(create(make("caller"), plain, "hum_other"))).toBe("collection_write_forbidden");
  });
  it("caller: a writer with no identity cannot create", () => {
    expect(code(create(make("caller"), P.anonymous))).toBe("collection_write_forbidden");
  });
});

describe("grant pins", () => {
  const m = compile({ read: ["staff"], write: ["staff"], update: ["staff"], delete: ["staff"] });
  const open = row({ data: { status: "open" } });
  const closed = row({ data: { status: "closed" } });
  const where = P.grantPinWhereIn;

  it("narrow the list filter", () => {
    expect(allowed(authorize(m, P.grantPinKeyIn, "list", { collection: T })).filter).toEqual({
      all: false, anyOf: null, allOf: [{ kind: "key", equals: "row1" }],
    });
    expect(allowed(authorize(m, where, "list", { collection: T })).filter).toEqual({
      all: false, anyOf: null, allOf: [{ kind: "field", field: "status", op: "eq", value: "open" }],
    });
  });
  it("hide rows outside the pin on every verb", () => {
    expect(code(authorize(m, where, "get", { collection: T, row: closed }))).toBe("row_not_found");
    expect(code(authorize(m, where, "update", { collection: T, row: closed, data: { status: "open" } }))).toBe("row_not_found");
    expect(code(authorize(m, where, "delete", { collection: T, row: closed }))).toBe("row_not_found");
    expect(code(authorize(m, where, "get", { collection: T, row: open }))).toBe("ok");
  });
  it("keep updated rows inside the pin", () => {
    expect(code(authorize(m, where, "update", { collection: T, row: open, data: { status: "open", title: "x" } }))).toBe("ok");
    expect(code(authorize(m, where, "update", { collection: T, row: open, data: { status: "closed" } }))).toBe("collection_write_forbidden");
  });
  it("let a holder create only inside the pin", () => {
    expect(code(authorize(m, where, "create", { collection: T, data: { status: "open" } }))).toBe("ok");
    expect(code(authorize(m, where, "create", { collection: T, data: { status: "closed" } }))).toBe("collection_write_forbidden");
    expect(code(authorize(m, P.grantPinKeyIn, "create", { collection: T, data: {} }))).toBe("collection_write_forbidden");
    expect(code(authorize(m, P.grantPinKeyIn, "create", { collection: T, key: "row1", data: {} }))).toBe("ok");
  });
  it("never widen: a pinned holder outside the read list still sees nothing", () => {
    const ownerOnly = compile({ read: ["owner"] });
    expect(code(authorize(ownerOnly, P.grantPinKeyIn, "list", { collection: T }))).toBe("collection_read_forbidden");
  });
});

describe("list filters", () => {
  const list = (tasks: Record<string, unknown>, p: Principal) => allowed(authorize(compile(tasks), p, "list", { collection: T }));

  it("every row: { all: true }", () => {
    expect(list({ read: ["owner"] }, P.owner).filter).toEqual({ all: true });
    expect(list({ read: ["staff:own", "member"] }, P.memberStaff).filter).toEqual({ all: true });
  });
  it("row-scoped subjects become OR-ed terms on creator, editor and relation fields", () => {
    expect(list({ read: ["creator", "assignee", "staff:own"] }, P.visitor).filter).toEqual({
      all: false,
      anyOf: [
        { kind: "creator", author: { kind: "visitor", id: "vis_1" } },
        { kind: "field", field: "assignee_id", op: "eq", value: "vis_1", relation: "assignee" },
      ],
      allOf: [],
    });
  });
  it("editor and its alias author give one term", () => {
    expect(list({ read: ["editor", "author", "member:own"] }, plain).filter).toEqual({
      all: false, anyOf: [{ kind: "editor", author: { kind: "human", id: "hum_plain" } }], allOf: [],
    });
  });
  it("a scope-own credential reads only what it wrote last", () => {
    expect(list({ read: ["owner"] }, P.credOwn).filter).toEqual({
      all: false, anyOf: null, allOf: [{ kind: "editor", author: { kind: "service", id: "crd_own" } }],
    });
  });
  it("a pin and row scoping combine: (scope OR scope) AND pin", () => {
    const f = list({ read: ["staff:creator", "assignee"] }, P.grantPinKeyIn).filter;
    expect(f).toEqual({
      all: false,
      anyOf: [
        { kind: "creator", author: { kind: "grant", id: "grt_kin" } },
        { kind: "field", field: "assignee_id", op: "eq", value: "grt_kin", relation: "assignee" },
      ],
      allOf: [{ kind: "key", equals: "row1" }],
    });
    const mine = row({ creator: { kind: "grant", id: "grt_kin" } });
    expect(matchesFilter(f, mine)).toBe(true);
    expect(matchesFilter(f, { ...mine, key: "row2" })).toBe(false);
    expect(matchesFilter(f, row())).toBe(false);
  });
  it("canRead is the filter", () => {
    const d = list({ read: ["creator"] }, P.visitor);
    const rows = [row(), row({ creator: authorOf(P.visitor) }), row({ editor: authorOf(P.visitor) })];
    expect(rows.map(d.canRead)).toEqual(rows.map((r) => matchesFilter(d.filter, r)));
    expect(rows.map(d.canRead)).toEqual([false, true, false]);
  });
  it("an empty read list refuses everyone, naming nobody", () => {
    const d = authorize(compile({ read: [] }), P.owner, "list", { collection: T });
    expect(d.ok ? null : { code: d.code, details: d.error.details }).toEqual({
      code: "collection_read_forbidden", details: { collection: T, allowed: [] },
    });
  });
  it("the read refusal names who may read", () => {
    const d = authorize(compile({ read: ["owner", "staff"] }), plain, "list", { collection: T });
    expect(d.ok ? null : d.error.message).toContain("owner, staff");
  });
  it("a creator match needs both kind and id", () => {
    const d = list({ read: ["creator"] }, P.owner);
    expect(d.canRead(row({ creator: { kind: "agent", id: "hum_owner" } }))).toBe(false);
    expect(d.canRead(row({ creator: { kind: "human", id: "hum_owner" } }))).toBe(true);
  });
  it("the owner and the owning agent are different authors for row scoping", () => {
    const d = list({ read: ["creator"] }, P.owner);
    expect(d.canRead(row({ creator: authorOf(P.agent) }))).toBe(false);
  });
});

describe("service credentials and leases", () => {
  const m = compile({ read: ["anyone"], write: ["owner"], delete: ["owner"] });
  const cred = (grants: unknown, mode: "explicit" | "following" = "explicit"): Principal =>
    ({ kind: "credential", credentialId: "crd_x", mode, grants } as Principal);

  it("an op is unrestricted when any entry naming it is unscoped", () => {
    const p = cred([{ collection: T, ops: ["read"], scope: "own" }, { collection: T, ops: ["read", "update"] }]);
    expect(code(authorize(m, p, "get", { collection: T, row: row() }))).toBe("ok");
  });
  it("own applies when every entry naming the op is own-scoped", () => {
    const p = cred([{ collection: T, ops: ["read"], scope: "own" }, { collection: T, ops: ["update"] }]);
    expect(code(authorize(m, p, "get", { collection: T, row: row() }))).toBe("credential_scope_forbidden");
    expect(code(authorize(m, p, "get", { collection: T, row: row({ editor: { kind: "service", id: "crd_x" } }) }))).toBe("ok");
  });
  it("own means wrote it last, not created it", () => {
    const p = cred([{ collection: T, ops: ["delete", "read"], scope: "own" }]);
    const created = row({ creator: { kind: "service", id: "crd_x" } });
    const d = authorize(m, p, "delete", { collection: T, row: created });
    expect(d.ok ? null : { code: d.code, details: d.error.details }).toEqual({ code: "credential_scope_forbidden", details: { collection: T, op: "delete" } });
  });
  it("a zero-op entry under following carves the collection out", () => {
    expect(code(authorize(m, cred([{ collection: T, ops: [] }], "following"), "list", { collection: T }))).toBe("credential_scope_forbidden");
    expect(code(authorize(m, cred([{ collection: "other", ops: [] }], "following"), "list", { collection: T }))).toBe("ok");
  });
  it("the allowlist is checked before the row is looked at", () => {
    expect(code(authorize(m, P.credRead, "update", { collection: T, row: null, data: {} }))).toBe("credential_scope_forbidden");
    expect(code(authorize(m, P.leaseRead, "delete", { collection: T, row: null }))).toBe("credential_scope_forbidden");
  });
  it("still cannot exceed the owner's authority", () => {
    const staffOnly = compile({ read: ["staff"], write: ["staff"], delete: ["staff"] });
    expect(code(authorize(staffOnly, P.credAll, "list", { collection: T }))).toBe("collection_read_forbidden");
    expect(code(authorize(staffOnly, P.credAll, "create", { collection: T, data: {} }))).toBe("collection_write_forbidden");
    expect(code(authorize(staffOnly, P.leaseWrite, "create", { collection: T, data: {} }))).toBe("collection_write_forbidden");
  });
  it("a lease's writes imply read, and it never deletes", () => {
    const both = { kind: "lease", taskId: "t", reads: ["other"], writes: [T] } as Principal;
    expect(code(authorize(m, both, "list", { collection: T }))).toBe("ok");
    expect(code(authorize(m, both, "create", { collection: T, data: {} }))).toBe("ok");
    expect(code(authorize(m, both, "delete", { collection: T, row: row() }))).toBe("credential_scope_forbidden");
    expect(code(authorize(m, both, "list", { collection: "other" }))).toBe("ok");
    expect(code(authorize(m, both, "create", { collection: "other", data: {} }))).toBe("credential_scope_forbidden");
  });
});

describe("row stamps", () => {
  it("authorOf gives each principal kind its author kind", () => {
    const kinds = Object.fromEntries(Object.entries(P).map(([name, p]) => [name, authorOf(p as Principal)]));
    expect(kinds).toMatchObject({
      owner: { kind: "human", id: "hum_owner" },
      agent: { kind: "agent", id: "agt_owner" },
      member: { kind: "human", id: "hum_plain" },
      grantStaff: { kind: "grant", id: "grt_staff" },
      visitor: { kind: "visitor", id: "vis_1" },
      anonymous: { kind: "anon", id: "anon" },
      credAll: { kind: "service", id: "crd_all" },
      leaseWrite: { kind: "service", id: "tsk_w" },
    });
  });
  it("the anonymous stamp never carries the address", () => {
    expect(JSON.stringify(authorOf(P.anonymous))).not.toContain("203.0.113");
  });
  it("only the anonymous have no identity for row scoping", () => {
    for (const [name, p] of Object.entries(P)) expect(identityOf(p as Principal) === null, name).toBe(name === "anonymous");
  });
  it("machine stamps for ingest and seed rows", () => {
    expect(machineAuthor("hook", "orders")).toEqual({ kind: "hook", id: "orders" });
    expect(machineAuthor("system", "seed")).toEqual({ kind: "system", id: "seed" });
  });
  it("STRANGER is nobody the fixtures use", () => {
    expect(Object.values(P).some((p) => authorOf(p as Principal).id === STRANGER.id)).toBe(false);
  });
});

describe("conditions (grant pin where, field terms)", () => {
  const data = { s: "b", n: 5, t: true, z: null };
  const cases: [string, Parameters<typeof matchesCond>[0], boolean][] = [
    ["eq same type", { field: "s", op: "eq", value: "b" }, true],
    ["eq across types never coerces", { field: "n", op: "eq", value: "5" }, false],
    ["neq same type", { field: "s", op: "neq", value: "a" }, true],
    ["neq across types matches nothing", { field: "n", op: "neq", value: "5" }, false],
    ["missing field matches nothing, neq included", { field: "x", op: "neq", value: "a" }, false],
    ["null matches nothing", { field: "z", op: "neq", value: "a" }, false],
    ["in", { field: "n", op: "in", value: [1, 5] }, true],
    ["in across types", { field: "n", op: "in", value: ["5"] }, false],
    ["notIn", { field: "s", op: "notIn", value: ["a", "c"] }, true],
    ["notIn holding the value", { field: "s", op: "notIn", value: ["b"] }, false],
    ["gt numbers", { field: "n", op: "gt", value: 4 }, true],
    ["lte numbers", { field: "n", op: "lte", value: 4 }, false],
    ["gte strings (ISO dates compare as strings)", { field: "s", op: "gte", value: "a" }, true],
    ["lt strings", { field: "s", op: "lt", value: "a" }, false],
    ["booleans do not order", { field: "t", op: "gt", value: false }, false],
    ["booleans compare equal", { field: "t", op: "eq", value: true }, true],
  ];
  for (const [name, cond, want] of cases) it(name, () => expect(matchesCond(cond, data)).toBe(want));
  it("non-object data matches nothing", () => {
    expect(matchesCond({ field: "s", op: "eq", value: "b" }, ["b"])).toBe(false);
    expect(matchesCond({ field: "s", op: "eq", value: "b" }, "b")).toBe(false);
    expect(matchesCond({ field: "s", op: "eq", value: "b" }, null)).toBe(false);
  });
});

describe("roleAccess (the roles endpoint's summary)", () => {
  const m = compile({
    read: ["member", "staff:assignee"], write: ["staff:own"], update: ["staff:own"], delete: ["lead"],
  });
  it("as a member holding the role", () => {
    expect(roleAccess(m, T, "staff", "member")).toEqual({ read: "all", create: "all", update: "own", delete: "none" });
    expect(roleAccess(m, T, "lead", "member")).toEqual({ read: "all", create: "all", update: "own", delete: "all" });
  });
  it("through a grant link (not a member)", () => {
    expect(roleAccess(m, T, "staff", "grant")).toEqual({ read: "own", create: "all", update: "own", delete: "none" });
  });
  it("appendOnly takes update and delete away", () => {
    const ao = compile({ read: ["staff"], write: ["staff"], delete: ["staff"], appendOnly: true });
    expect(roleAccess(ao, T, "staff", "grant")).toEqual({ read: "all", create: "all", update: "none", delete: "none" });
  });
  it("agrees with authorize", () => {
    const g = P.grantStaff;
    const assigned = row({ data: { assignee_id: "grt_staff" } });
    expect(code(authorize(m, g, "get", { collection: T, row: assigned }))).toBe("ok");
    expect(code(authorize(m, g, "get", { collection: T, row: row() }))).toBe("row_not_found");
  });
  it("unknown collection → null", () => expect(roleAccess(m, "nope", "staff", "member")).toBeNull());
});
