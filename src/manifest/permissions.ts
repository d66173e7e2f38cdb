/**
 * The permission vocabulary of a manifest: custom roles (with transitive `includes`) and
 * the subjects that may appear in a collection's permission lists. Parsing a subject
 * here, once per deploy, means the permission engine only ever sees the small structured
 * `Subject` form and never re-reads manifest strings.
 */
import { at, expectObject, expectString, expectStringList, fail, onlyKeys, ROOT } from "./read";
import type { CompiledRole, Subject } from "./types";

/** Names that are subjects of their own and can never be custom roles or relations. */
export const RESERVED_NAMES = ["owner", "member", "members", "anyone", "agent", "creator", "editor", "author"];

export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export function compileRoles(value: unknown): Record<string, CompiledRole> {
  const path = at(ROOT, "roles");
  if (value === undefined) return {};
  const roles = expectObject(value, path, "manifest_invalid");
  const declared: Record<string, { label: string; description: string | null; includes: string[] }> = {};
  for (const [name, raw] of Object.entries(roles)) {
    const rPath = at(path, name);
    if (RESERVED_NAMES.includes(name)) {
      fail("permission_role_invalid", rPath, `"${name}" is a built-in subject and cannot be declared as a custom role`);
    }
    if (!ROLE_NAME.test(name)) {
      fail("permission_role_invalid", rPath, "role names start with a lowercase letter, then lowercase letters, digits, _ or -, at most 64 characters");
    }
    const def = expectObject(raw, rPath, "manifest_invalid");
    onlyKeys(def, ["label", "description", "includes"], rPath, "manifest_invalid");
    const label = expectString(def.label, at(rPath, "label"), "manifest_invalid", { nonBlank: true, max: 80, singleLine: true });
    const description = def.description === undefined ? null : expectString(def.description, at(rPath, "description"), "manifest_invalid", { max: 280 });
    const includes = def.includes === undefined ? [] : expectStringList(def.includes, at(rPath, "includes"), "permission_role_invalid");
    declared[name] = { label, description, includes };
  }
  // Every include must name a declared custom role; built-ins are never included.
  for (const [name, def] of Object.entries(declared)) {
    def.includes.forEach((inc, i) => {
      const iPath = at(at(at(path, name), "includes"), i);
      if (RESERVED_NAMES.includes(inc)) fail("permission_role_invalid", iPath, `includes may name only custom roles, not the built-in "${inc}"`);
      if (!Object.hasOwn(declared, inc)) fail("permission_role_invalid", iPath, `includes names an undeclared role "${inc}"`);
      if (inc === name) fail("permission_role_invalid", iPath, `role "${name}" includes itself`);
    });
  }
  // Cycle detection (depth-first, colouring), then transitive expansion.
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      fail("permission_role_invalid", at(at(path, cycle[0]), "includes"), `roles include each other in a cycle: ${cycle.join(" → ")}`);
    }
    state.set(name, "visiting");
    for (const inc of declared[name].includes) visit(inc, [...trail, name]);
    state.set(name, "done");
  };
  for (const name of Object.keys(declared)) visit(name, []);
  const expand = (name: string, acc: Set<string>): Set<string> => {
    if (acc.has(name)) return acc;
    acc.add(name);
    for (const inc of declared[name].includes) expand(inc, acc);
    return acc;
  };
  const out: Record<string, CompiledRole> = {};
  for (const [name, def] of Object.entries(declared)) {
    out[name] = { ...def, expands: [...expand(name, new Set())].sort() };
  }
  return out;
}

export type ListKind = "read" | "write" | "update" | "delete" | "countRead";

export interface SubjectContext {
  roles: Record<string, CompiledRole>;
  relations: Record<string, unknown>;
}

/** Parses one permission subject for the given list, or throws permission_role_invalid. */
export function parseSubject(raw: string, list: ListKind, ctx: SubjectContext, path: string): Subject {
  const refuse = (message: string): never => fail("permission_role_invalid", path, message);
  if (raw === "agent" || raw.startsWith("agent:")) refuse('the "agent" subject is retired; the owning agent already acts as "owner"');
  let subject: Subject;
  if (raw === "owner" || raw === "member" || raw === "anyone") {
    subject = { subject: raw, who: raw, scope: "all" };
  } else if (Object.hasOwn(ctx.roles, raw)) {
    subject = { subject: raw, who: "role", role: raw, scope: "all" };
  } else if (raw === "creator") {
    subject = { subject: raw, who: "anyone", scope: "creator" };
  } else if (raw === "editor" || raw === "author") {
    subject = { subject: raw, who: "anyone", scope: "editor" };
  } else if (Object.hasOwn(ctx.relations, raw)) {
    subject = { subject: raw, who: "anyone", scope: "relation", relation: raw };
  } else if (raw.includes(":")) {
    const [holder, narrowing, ...rest] = raw.split(":");
    if (rest.length > 0) refuse(`"${raw}" has more than one ":"`);
    let who: Pick<Subject, "who" | "role">;
    if (holder === "member" || holder === "anyone") who = { who: holder };
    else if (Object.hasOwn(ctx.roles, holder)) who = { who: "role", role: holder };
    else if (holder === "owner") return refuse(`"${raw}": the owner reaches every row; use "owner"`);
    else return refuse(`"${raw}": "${holder}" is not a declared role`);
    if (narrowing === "own") subject = { subject: raw, ...who, scope: "editor" };
    else if (narrowing === "creator") subject = { subject: raw, ...who, scope: "creator" };
    else if (Object.hasOwn(ctx.relations, narrowing)) subject = { subject: raw, ...who, scope: "relation", relation: narrowing };
    else return refuse(`"${raw}": "${narrowing}" is neither own, creator nor a relation of this collection`);
  } else {
    return refuse(`"${raw}" is not a subject: use owner, member, anyone, a declared role, or a row-scoped subject`);
  }
  if (subject.scope !== "all") {
    if (list === "countRead") refuse(`row-scoped subject "${raw}" is not valid in countRead`);
    // Spec A lets write name <role>:own / <role>:creator (a holder of the role may create;
    // an inherited update then reaches only their own rows). Bare row-scoped subjects
    // and relations are never valid in write.
    if (list === "write" && (raw === "creator" || raw === "editor" || raw === "author" || subject.scope === "relation")) {
      refuse(`row-scoped subject "${raw}" is not valid in write`);
    }
  }
  return subject;
}

export function compileList(value: unknown, list: ListKind, ctx: SubjectContext, path: string, opts: { nonEmpty: boolean }): Subject[] {
  const entries = expectStringList(value, path, "permission_role_invalid", { nonEmpty: opts.nonEmpty, unique: false });
  const seen = new Set<string>();
  const out: Subject[] = [];
  entries.forEach((entry, i) => {
    const subject = parseSubject(entry, list, ctx, at(path, i));
    if (seen.has(entry)) return;
    seen.add(entry);
    out.push(subject);
  });
  return out;
}

export function isRowScoped(subject: Subject): boolean {
  return subject.scope !== "all";
}

export function listsNameRelation(lists: Subject[][], relation: string): boolean {
  return lists.some((list) => list.some((s) => s.relation === relation));
}

