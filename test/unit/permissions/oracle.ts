// The expectation generator for the permission matrix: a second, table-driven statement of
// the rules that shares no code with src/permissions. Every principal's facts and every
// subject's meaning are written out by hand below; `expected` combines them in the order
// docs/permissions.md gives. The hand-checked table (hand-checked.test.ts) is run against
// both this oracle and the engine, so a rule misread the same way in both would still fail
// there.
import type { PrincipalName, Variant } from "./fixtures";

type Allow = "yes" | "no" | "own";

export interface Facts {
  ownerLevel: boolean;
  member: boolean;
  /** Roles held, expanded by hand (lead includes staff). */
  roles: string[];
  /** Has an identity row-scoped subjects can match. */
  identity: boolean;
  /** The fixture row (key row1, status open) is inside the pin / outside / no pin. */
  pin: "none" | "in" | "out";
  allow: { read: Allow; create: Allow; update: Allow; delete: Allow };
  /** Owner or owning agent: purge, restore, deleted list. */
  trash: boolean;
}

const YES = { read: "yes", create: "yes", update: "yes", delete: "yes" } as const;
const NONE = { read: "no", create: "no", update: "no", delete: "no" } as const;
const person = (over: Partial<Facts>): Facts => ({
  ownerLevel: false, member: false, roles: [], identity: true, pin: "none", allow: YES, trash: false, ...over,
});

export const FACTS: Record<PrincipalName, Facts> = {
  owner: person({ ownerLevel: true, member: true, trash: true }),
  agent: person({ ownerLevel: true, member: true, trash: true }),
  member: person({ member: true }),
  memberStaff: person({ member: true, roles: ["staff"] }),
  memberLead: person({ member: true, roles: ["lead", "staff"] }),
  grantStaff: person({ roles: ["staff"] }),
  grantLead: person({ roles: ["lead", "staff"] }),
  grantPinKeyIn: person({ roles: ["staff"], pin: "in" }),
  grantPinKeyOut: person({ roles: ["staff"], pin: "out" }),
  grantPinWhereIn: person({ roles: ["staff"], pin: "in" }),
  grantPinWhereOut: person({ roles: ["staff"], pin: "out" }),
  visitor: person({}),
  anonymous: person({ identity: false }),
  credAll: person({ ownerLevel: true, member: true }),
  credRead: person({ ownerLevel: true, member: true, allow: { ...NONE, read: "yes" } }),
  credNoOps: person({ ownerLevel: true, member: true, allow: NONE }),
  credOther: person({ ownerLevel: true, member: true, allow: NONE }),
  credOwn: person({ ownerLevel: true, member: true, allow: { read: "own", create: "own", update: "own", delete: "own" } }),
  credFollowing: person({ ownerLevel: true, member: true }),
  credFollowingCarve: person({ ownerLevel: true, member: true, allow: { ...NONE, read: "yes" } }),
  leaseWrite: person({ ownerLevel: true, member: true, allow: { read: "yes", create: "yes", update: "yes", delete: "no" } }),
  leaseRead: person({ ownerLevel: true, member: true, allow: { ...NONE, read: "yes" } }),
  leaseOther: person({ ownerLevel: true, member: true, allow: NONE }),
};

export interface SubjectFacts {
  who: "owner" | "member" | "anyone" | "staff" | "lead";
  scope: "all" | "creator" | "editor" | "relation";
  /** Lists the manifest accepts it in. */
  inWrite: boolean;
  inCount: boolean;
}

const s = (who: SubjectFacts["who"], scope: SubjectFacts["scope"], inWrite: boolean): SubjectFacts => ({ who, scope, inWrite, inCount: scope === "all" });

export const SUBJECTS: Record<string, SubjectFacts> = {
  owner: s("owner", "all", true),
  member: s("member", "all", true),
  anyone: s("anyone", "all", true),
  staff: s("staff", "all", true),
  lead: s("lead", "all", true),
  "staff:own": s("staff", "editor", true),
  "staff:creator": s("staff", "creator", true),
  "member:own": s("member", "editor", true),
  "anyone:creator": s("anyone", "creator", true),
  creator: s("anyone", "creator", false),
  editor: s("anyone", "editor", false),
  author: s("anyone", "editor", false),
  assignee: s("anyone", "relation", false),
  "staff:assignee": s("staff", "relation", false),
};

export type Verb = "list" | "get" | "count" | "create" | "update" | "updateHidden" | "delete" | "deleteHidden" | "purge" | "restore" | "listDeleted";

/**
 * The manifest a verb's scenario is tested under, with the subject `S` placed in the list
 * that governs the verb. Everything else is as open as possible (`read: ["anyone"]`) or
 * owner-only, so only `S` decides. `null`: the manifest refuses `S` in that list.
 */
export function scenario(verb: Verb, subject: string): Record<string, unknown> | null {
  const f = SUBJECTS[subject];
  switch (verb) {
    case "list":
    case "get":
    case "purge":
    case "restore":
    case "listDeleted":
      return { read: [subject] };
    case "count":
      return f.inCount ? { countRead: [subject] } : null;
    case "create":
      return f.inWrite ? { read: ["anyone"], write: [subject], update: ["owner"] } : null;
    case "update":
      return { read: ["anyone"], update: [subject] };
    case "updateHidden":
      return { read: [subject], update: ["anyone"] };
    case "delete":
      return { read: ["anyone"], delete: [subject] };
    case "deleteHidden":
      return { read: [subject], delete: ["anyone"] };
  }
}

const inPopulation = (sf: SubjectFacts, p: Facts) =>
  sf.who === "owner" ? p.ownerLevel : sf.who === "member" ? p.member : sf.who === "anyone" ? true : p.roles.includes(sf.who);

const rowInScope = (sf: SubjectFacts, p: Facts, v: Variant) => {
  if (sf.scope === "all") return true;
  if (!p.identity) return false;
  if (sf.scope === "creator") return v === "mine" || v === "created";
  if (sf.scope === "editor") return v === "mine" || v === "edited";
  return v === "mine" || v === "assigned";
};

const reaches = (sf: SubjectFacts, p: Facts, v: Variant) => inPopulation(sf, p) && rowInScope(sf, p, v);
const lastWroteIt = (v: Variant) => v === "mine" || v === "edited";
const openSubject = SUBJECTS.anyone;

/** "ok", or the error code; for `list`, "ok:seen" / "ok:unseen" says whether the row passes the filter. */
export function expected(verb: Verb, subject: string, name: PrincipalName, v: Variant): string {
  const sf = SUBJECTS[subject];
  const p = FACTS[name];
  const op = verb === "list" || verb === "get" || verb === "count" ? "read" : verb === "create" ? "create" : verb.startsWith("update") ? "update" : "delete";
  if (verb === "purge") return p.trash ? "ok" : "purge_forbidden";
  if (verb === "restore" || verb === "listDeleted") return p.trash ? "ok" : "forbidden";
  if (p.allow[op] === "no") return "credential_scope_forbidden";
  const own = p.allow[op] === "own";
  if (verb === "count") return inPopulation(sf, p) ? "ok" : "collection_count_forbidden";
  if (verb === "create") {
    if (!inPopulation(sf, p)) return "collection_write_forbidden";
    return p.pin === "out" ? "collection_write_forbidden" : "ok";
  }
  if (verb === "list") {
    if (!inPopulation(sf, p) || (sf.scope !== "all" && !p.identity)) return "collection_read_forbidden";
    const seen = reaches(sf, p, v) && p.pin !== "out" && (!own || lastWroteIt(v));
    return seen ? "ok:seen" : "ok:unseen";
  }
  // Row-addressed verbs: the read list hides first, then `own`, then the verb's list.
  const readSubject = verb === "update" || verb === "delete" ? openSubject : sf;
  if (!reaches(readSubject, p, v) || p.pin === "out") return "row_not_found";
  if (own && !lastWroteIt(v)) return "credential_scope_forbidden";
  if (verb === "get") return "ok";
  const listSubject = verb === "update" || verb === "delete" ? sf : openSubject;
  if (reaches(listSubject, p, v)) return "ok";
  return verb.startsWith("update") ? "collection_write_forbidden" : "collection_delete_forbidden";
}
