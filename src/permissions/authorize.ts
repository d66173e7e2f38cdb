/**
 * The permission decision: may this principal do this operation on this collection (and
 * row), under this compiled manifest? The AppStore calls `authorize` inside its write
 * transaction, after loading the row and before validating data; routes never decide
 * permissions themselves. Pure: no I/O, no clock, no randomness.
 *
 * The order of checks is the contract (docs/permissions.md has the tables):
 *   collection declared → principal's own allowance (credential allowlist, lease) →
 *   row exists → read list reaches the row (else 404 row_not_found, on every verb) →
 *   credential `scope: own` → appendOnly → the verb's list → pin / immutable / writer-set.
 * So a refusal that would confirm a key (403) only ever comes after the row is known to be
 * readable, and a refusal that needs no row never depends on whether the row exists.
 */
import type { CompiledCollection, CompiledManifest, Subject } from "../manifest";
import { makeFilter, matchesFilter, matchesTerm, pinTerms, type RowContext, type RowFilter, type RowTerm } from "./filters";
import { identityOf, isOwnerOrAgent, sameAuthor, type CredentialOp, type Principal } from "./principal";
import { refusals, type Refusal } from "./refusals";
import { inPopulation, reach, reachesAny, scopeTerm, standing, type Reach, type Standing } from "./subjects";

export type Op = "list" | "get" | "count" | "create" | "update" | "delete" | "purge" | "restore" | "listDeleted";

/** What each operation must be told. `row: null` means no row at that key (for get/update/delete: no LIVE row). */
export interface OpContexts {
  list: { collection: string };
  count: { collection: string };
  get: { collection: string; row: RowContext | null };
  /** `key`: the key the caller asked for (absent or null: the server mints one). */
  create: { collection: string; key?: string | null; data: unknown };
  /** `data`: the row's new data (PATCH replaces it whole). */
  update: { collection: string; row: RowContext | null; data: unknown };
  delete: { collection: string; row: RowContext | null };
  /** The row at the key, live or soft-deleted. */
  purge: { collection: string; row: RowContext | null };
  /** The soft-deleted row at the key. */
  restore: { collection: string; row: RowContext | null };
  listDeleted: { collection: string };
}

/** Checks the AppStore still owes a write the engine allowed. */
export interface WriteChecks {
  /** Count this write against the collection's anonymous budget (`null`: it does not count). */
  anonBudget: { perIpPerDay: number; perAppPerDay: number; ip: string | null } | null;
  /** The collection needs a bot-challenge token from this writer (on create and upsert). */
  challenge: boolean;
}

export interface OpAllowances {
  /** Apply `filter` in the query (it is exactly what `canRead` tests). */
  list: { filter: RowFilter; canRead: (row: RowContext) => boolean };
  /** The rows to count: every row, except for a pinned grant holder (its pin). */
  count: { filter: RowFilter };
  get: object;
  /** `key`: the key to create at; `null` lets the server mint one (keyClaim `caller` fills it in). */
  create: { key: string | null; checks: WriteChecks };
  update: { checks: WriteChecks };
  delete: object;
  purge: object;
  restore: object;
  listDeleted: object;
}

export type Decision<O extends Op> = ({ ok: true } & OpAllowances[O]) | Refusal;

const ALLOWLIST_OP: Record<Op, CredentialOp | null> = {
  list: "read", get: "read", count: "read", create: "create", update: "update", delete: "delete",
  purge: null, restore: null, listDeleted: null,
};

export function authorize<O extends Op>(manifest: CompiledManifest, principal: Principal, op: O, ctx: OpContexts[O]): Decision<O> {
  const collection = Object.hasOwn(manifest.collections, ctx.collection) ? manifest.collections[ctx.collection] : undefined;
  if (!collection) return refusals.collectionNotFound(ctx.collection);
  const decide = DECIDERS[op] as (d: Deciding, ctx: OpContexts[O]) => Decision<O>;
  return decide(new Deciding(manifest, collection, principal), ctx);
}

/** One decision in progress: the collection, the principal and its standing, computed once. */
class Deciding {
  readonly standing: Standing;
  constructor(readonly manifest: CompiledManifest, readonly collection: CompiledCollection, readonly principal: Principal) {
    this.standing = standing(manifest, principal);
  }

  get name(): string {
    return this.collection.name;
  }

  reach(list: Subject[]): Reach {
    return reach(list, this.standing, this.collection.relations);
  }

  /** The principal's own allowance, before any manifest list: a credential's allowlist or a lease. */
  allowance(op: Op): { ok: true; ownOnly: boolean } | Refusal {
    const p = this.principal;
    const wanted = ALLOWLIST_OP[op];
    if (p.kind === "credential" && wanted) {
      const entries = p.grants.filter((g) => g.collection === this.name);
      if (entries.length === 0) {
        return p.mode === "following" ? { ok: true, ownOnly: false } : refusals.credentialScope(this.name, wanted, "op");
      }
      const covering = entries.filter((g) => g.ops.includes(wanted));
      if (covering.length === 0) return refusals.credentialScope(this.name, wanted, "op");
      return { ok: true, ownOnly: covering.every((g) => g.scope === "own") };
    }
    if (p.kind === "lease" && wanted) {
      const readable = p.reads.includes(this.name) || p.writes.includes(this.name);
      const covered = wanted === "read" ? readable : wanted === "delete" ? false : p.writes.includes(this.name);
      return covered ? { ok: true, ownOnly: false } : refusals.credentialScope(this.name, wanted, "op");
    }
    return { ok: true, ownOnly: false };
  }

  /** Terms every row this principal touches must satisfy: a grant pin, a `scope: own` credential. */
  restrictions(ownOnly: boolean): RowTerm[] {
    const p = this.principal;
    const terms = p.kind === "grant" ? pinTerms(p.pin) : [];
    if (ownOnly && this.standing.identity) terms.push({ kind: "editor", author: this.standing.identity });
    return terms;
  }

  /** The read filter, or `null` when the read list reaches no row at all for this principal. */
  readFilter(ownOnly: boolean): RowFilter | null {
    const r = this.reach(this.collection.permissions.read);
    if (!reachesAny(r)) return null;
    return makeFilter(r.all ? null : r.terms, this.restrictions(ownOnly));
  }

  /**
   * Steps shared by every row-addressed verb: the row exists, the read list reaches it
   * (the pin included), and a `scope: own` credential wrote it last. The pin and `own`
   * are applied separately so an own-scoped credential is told 403 on another's row
   * (spec B), while a row outside a grant's pin stays hidden.
   */
  visibleRow(op: Op, row: RowContext | null, ownOnly: boolean): Refusal | null {
    if (!row) return refusals.rowNotFound();
    const filter = this.readFilter(false);
    if (!filter || !matchesFilter(filter, row)) return refusals.rowNotFound();
    if (ownOnly && !this.restrictions(true).every((t) => matchesTerm(t, row))) {
      return refusals.credentialScope(this.name, ALLOWLIST_OP[op] ?? op, "own");
    }
    return null;
  }

  /** appendOnly refuses update and delete, before any list, except for the owner when excepted. */
  appendOnlyRefusal(): Refusal | null {
    const c = this.collection;
    if (!c.appendOnly) return null;
    if (c.appendOnlyExcept.includes("owner") && this.standing.ownerLevel) return null;
    return refusals.appendOnly(this.name);
  }

  /** The subjects of a list that reach this row for the caller (row-scoped ones included). */
  listReachesRow(list: Subject[], row: RowContext): { ok: boolean; via: Subject[] } {
    const { identity } = this.standing;
    const via = list.filter((s) => {
      if (!inPopulation(s, this.standing)) return false;
      if (s.scope === "all") return true;
      const term = identity && scopeTerm(s, identity, this.collection.relations);
      return !!term && matchesTerm(term, row);
    });
    return { ok: via.length > 0, via };
  }

  /** Budget and challenge: anonymous writers admitted only through an `anyone` subject. */
  writeChecks(via: Subject[]): WriteChecks {
    const p = this.principal;
    const anonymousWriter = (p.kind === "anonymous" || p.kind === "visitor" || p.kind === "grant") && via.every((s) => s.who === "anyone");
    const b = this.collection.anonWriteBudget;
    return {
      anonBudget: anonymousWriter && b ? { ...b, ip: "ip" in p ? (p.ip ?? null) : null } : null,
      challenge: anonymousWriter && this.collection.antiAbuse !== null,
    };
  }

  /** Whether data satisfies the pin's where list (a key pin is checked against the key). */
  insidePin(key: string | null, data: unknown): boolean {
    const p = this.principal;
    if (p.kind !== "grant" || !p.pin) return true;
    if ("key" in p.pin) return key === p.pin.key;
    return pinTerms(p.pin).every((t) => matchesTerm(t, { key: key ?? "", creator: NOBODY, editor: NOBODY, data }));
  }
}

const NOBODY = { kind: "system", id: "" } as const;

type Deciders = { [O in Op]: (d: Deciding, ctx: OpContexts[O]) => Decision<O> };

const DECIDERS: Deciders = {
  list(d) {
    const allowed = d.allowance("list");
    if (!allowed.ok) return allowed;
    const filter = d.readFilter(allowed.ownOnly);
    if (!filter) return refusals.readForbidden(d.name, d.collection.permissions.read);
    return { ok: true, filter, canRead: (row: RowContext) => matchesFilter(filter, row) };
  },

  count(d) {
    const allowed = d.allowance("count");
    if (!allowed.ok) return allowed;
    const list = d.collection.permissions.countRead;
    if (list === null || !list.some((s) => inPopulation(s, d.standing))) return refusals.countForbidden(d.name, list);
    // countRead never holds row-scoped subjects (the manifest refuses them), so only a pin narrows.
    return { ok: true, filter: makeFilter(null, d.restrictions(false)) };
  },

  get(d, ctx) {
    const allowed = d.allowance("get");
    if (!allowed.ok) return allowed;
    return d.visibleRow("get", ctx.row, allowed.ownOnly) ?? { ok: true };
  },

  create(d, ctx) {
    const allowed = d.allowance("create");
    if (!allowed.ok) return allowed;
    const write = d.collection.permissions.write;
    // Row scope does not matter for create: `<role>:own` in write lets the role's holders create.
    const via = write.filter((s) => inPopulation(s, d.standing));
    if (via.length === 0) return refusals.writeForbidden(d.name, "write", write);
    let key = ctx.key ?? null;
    const keyClaim = d.collection.keyClaim;
    if (keyClaim === "server" && key !== null) {
      return refusals.writeForbidden(d.name, "write", write, `Collection "${d.name}" mints its own keys (keyClaim server): leave key out.`);
    }
    if (keyClaim === "caller") {
      const id = identityOf(d.principal);
      if (!id) return refusals.writeForbidden(d.name, "write", write, `Collection "${d.name}" keys rows by the writer's identity (keyClaim caller), and you have none.`);
      if (key !== null && key !== id.id) {
        return refusals.writeForbidden(d.name, "write", write, `Collection "${d.name}" keys rows by the writer's identity (keyClaim caller): the key must be yours.`);
      }
      key = id.id;
    }
    if (!d.insidePin(key, ctx.data)) {
      return refusals.writeForbidden(d.name, "write", write, "Your grant link is pinned: you may write only the pinned rows.");
    }
    return { ok: true, key, checks: d.writeChecks(via) };
  },

  update(d, ctx) {
    const allowed = d.allowance("update");
    if (!allowed.ok) return allowed;
    const hidden = d.visibleRow("update", ctx.row, allowed.ownOnly);
    if (hidden) return hidden;
    const row = ctx.row as RowContext;
    const appendOnly = d.appendOnlyRefusal();
    if (appendOnly) return appendOnly;
    const p = d.collection.permissions;
    const listName = p.updateInherited ? "write" : "update";
    const { ok, via } = d.listReachesRow(p.update, row);
    if (!ok) return refusals.writeForbidden(d.name, listName, p.update);
    if (!d.insidePin(row.key, ctx.data)) {
      return refusals.writeForbidden(d.name, listName, p.update, "Your grant link is pinned: the row must stay inside the pin.");
    }
    const before = fieldsOf(row.data);
    const after = fieldsOf(ctx.data);
    for (const field of d.collection.immutable) {
      // Omitted carries forward; an unchanged echo is fine.
      if (Object.hasOwn(after, field) && !sameJson(before[field], after[field])) return refusals.immutable(d.name, field);
    }
    const isCreator = sameAuthor(row.creator, d.standing.identity);
    for (const [name, rel] of Object.entries(d.collection.relations)) {
      if (rel.set !== "writer" || isCreator) continue;
      if (!sameJson(before[rel.field], after[rel.field])) return refusals.relationSet(d.name, name, rel.field);
    }
    return { ok: true, checks: d.writeChecks(via) };
  },

  delete(d, ctx) {
    const allowed = d.allowance("delete");
    if (!allowed.ok) return allowed;
    const hidden = d.visibleRow("delete", ctx.row, allowed.ownOnly);
    if (hidden) return hidden;
    const appendOnly = d.appendOnlyRefusal();
    if (appendOnly) return appendOnly;
    const list = d.collection.permissions.delete;
    if (!d.listReachesRow(list, ctx.row as RowContext).ok) return refusals.deleteForbidden(d.name, list);
    return { ok: true };
  },

  purge(d, ctx) {
    if (!isOwnerOrAgent(d.principal)) return refusals.purgeForbidden();
    return ctx.row ? { ok: true } : refusals.rowNotFound();
  },

  restore(d, ctx) {
    if (!isOwnerOrAgent(d.principal)) return refusals.ownerOnly("restore rows");
    return ctx.row ? { ok: true } : refusals.rowNotFound();
  },

  listDeleted(d) {
    return isOwnerOrAgent(d.principal) ? { ok: true } : refusals.ownerOnly("list deleted rows");
  },
};

function fieldsOf(data: unknown): Record<string, unknown> {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
}

/** Structural equality of JSON values (object key order ignored); `undefined` equals only itself. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  const bo = b as Record<string, unknown>;
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(bo, k) && sameJson((a as Record<string, unknown>)[k], bo[k]));
}
