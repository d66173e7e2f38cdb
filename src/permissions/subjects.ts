/**
 * What one permission list means for one principal. The manifest module already parsed
 * every subject into `{ who, role?, scope, relation? }`; this file answers the two
 * questions the engine asks of it:
 *
 *   1. does the subject's population include the principal (`who`)?  — `standing`
 *   2. which rows does it then reach (`scope`)?                       — `reach`
 *
 * Populations (WIRE §5.2 "Hierarchy"): `owner` is the owner and the owning agent (and the
 * owner's delegates: service and lease credentials); `member` is every member AND the
 * owner-level principals (only owner ⇒ member); `anyone` is everybody, anonymous included;
 * `<role>` is a member or grant-link holder holding the role or a role that includes it.
 * A custom role never implies `member`, and no built-in population holds a custom role.
 */
import type { CompiledManifest, Relation, Subject } from "../manifest";
import { identityOf, isOwnerLevel, type Author, type Principal } from "./principal";
import type { RowTerm } from "./filters";

/** The facts about a principal that subject matching needs, computed once per decision. */
export interface Standing {
  ownerLevel: boolean;
  member: boolean;
  /** Custom roles held, expanded through `includes`. */
  roles: ReadonlySet<string>;
  /** What row-scoped subjects compare against; `null`: reaches no row-scoped subject. */
  identity: Author | null;
}

export function standing(manifest: CompiledManifest, principal: Principal): Standing {
  const ownerLevel = isOwnerLevel(principal);
  const held = principal.kind === "member" ? principal.roles : principal.kind === "grant" ? [principal.role] : [];
  const roles = new Set<string>();
  for (const r of held) for (const e of manifest.roles[r]?.expands ?? []) roles.add(e);
  return { ownerLevel, member: ownerLevel || principal.kind === "member", roles, identity: identityOf(principal) };
}

/** Whether the subject's population includes the principal, rows aside. */
export function inPopulation(subject: Subject, s: Standing): boolean {
  switch (subject.who) {
    case "owner":
      return s.ownerLevel;
    case "member":
      return s.member;
    case "anyone":
      return true;
    case "role":
      return subject.role !== undefined && s.roles.has(subject.role);
  }
}

/** The rows one permission list reaches: every row, or those matching any term. */
export interface Reach {
  all: boolean;
  terms: RowTerm[];
  /** The subjects whose population includes the principal (whatever rows they reach). */
  matched: Subject[];
}

/** The row term a row-scoped subject stands for, for this identity. */
export function scopeTerm(subject: Subject, identity: Author, relations: Record<string, Relation>): RowTerm | null {
  switch (subject.scope) {
    case "all":
      return null;
    case "creator":
      return { kind: "creator", author: identity };
    case "editor":
      return { kind: "editor", author: identity };
    case "relation": {
      const rel = subject.relation === undefined ? undefined : relations[subject.relation];
      if (!rel) return null;
      return { kind: "field", field: rel.field, op: "eq", value: identity.id, relation: subject.relation };
    }
  }
}

export function reach(list: Subject[], s: Standing, relations: Record<string, Relation>): Reach {
  const out: Reach = { all: false, terms: [], matched: [] };
  for (const subject of list) {
    if (!inPopulation(subject, s)) continue;
    out.matched.push(subject);
    if (subject.scope === "all") {
      out.all = true;
      continue;
    }
    if (!s.identity) continue;
    const term = scopeTerm(subject, s.identity, relations);
    if (term && !out.terms.some((t) => JSON.stringify(t) === JSON.stringify(term))) out.terms.push(term);
  }
  if (out.all) out.terms = [];
  return out;
}

/** Whether the reach can ever include a row (a row-scoped subject without identity cannot). */
export function reachesAny(r: Reach): boolean {
  return r.all || r.terms.length > 0;
}
