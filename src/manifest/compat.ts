/**
 * The redeploy compatibility gate (WIRE §6.5, spec A Shapes 2). A new version is refused
 * (unless forced) when it would strand live rows or show more than the human agreed to;
 * taking access away is always compatible. It compares two compiled manifests and
 * returns every break with the path in the NEW manifest (or the old one, for something
 * removed) and a sentence a human can act on.
 */
import { originCovered, ruleTarget } from "./origins";
import { at, deepEqual, ROOT } from "./read";
import { routeFields } from "./routes";
import { acceptsEverything, schemaTightenings } from "./schema-compat";
import type { CompiledCollection, CompiledManifest, CompiledRole, Subject } from "./types";

export interface CompatBreak {
  path: string;
  message: string;
}

export interface CompatResult {
  breaks: CompatBreak[];
}

/** The gate's breaks in two kinds: rows left without a home, and more shown than before. */
export interface CompatParts {
  /** Live rows the new manifest would strand (never overridable by a template upgrade). */
  strandings: CompatBreak[];
  /** Disclosure widened: reach, capabilities, hosts, webhook targets, routes. */
  widenings: CompatBreak[];
}

export function compatGate(previous: CompiledManifest, next: CompiledManifest): CompatResult {
  return { breaks: gate(previous, next).map(({ path, message }) => ({ path, message })) };
}

/** The same breaks as `compatGate`, sorted into strandings and widenings (template upgrades treat them differently). */
export function compatParts(previous: CompiledManifest, next: CompiledManifest): CompatParts {
  const all = gate(previous, next);
  const strip = ({ path, message }: CompatBreak) => ({ path, message });
  return { strandings: all.filter((b) => b.strands).map(strip), widenings: all.filter((b) => !b.strands).map(strip) };
}

function gate(previous: CompiledManifest, next: CompiledManifest): (CompatBreak & { strands: boolean })[] {
  const breaks: (CompatBreak & { strands: boolean })[] = [];
  const push = (strands: boolean, ...found: CompatBreak[]) => breaks.push(...found.map((b) => ({ ...b, strands })));
  const cRoot = at(ROOT, "collections");
  const roleNames = [...new Set([...Object.keys(previous.roles), ...Object.keys(next.roles)])];

  for (const [name, prev] of Object.entries(previous.collections)) {
    const cPath = at(cRoot, name);
    const cur = next.collections[name];
    if (!cur) {
      push(true, { path: cPath, message: `collection "${name}" was removed; its rows would be stranded` });
      continue;
    }
    push(true, ...strandings(prev, cur, cPath));
    push(false, ...widenedReach("read", prev.permissions.read, cur.permissions.read, previous, next, roleNames, at(cPath, "read"), name));
    if (cur.permissions.countRead) {
      push(false, ...widenedReach("countRead", prev.permissions.countRead ?? [], cur.permissions.countRead, previous, next, roleNames, at(cPath, "countRead"), name));
    }
  }

  const newOnly = (key: "capabilities", label: string) => {
    next[key].forEach((value, i) => {
      if (!previous[key].includes(value)) push(false, { path: at(at(ROOT, key), i), message: `${label} "${value}" added` });
    });
  };
  newOnly("capabilities", "capability");
  if (next.cdn && !previous.cdn) push(false, { path: at(ROOT, "cdn"), message: "cdn turned on: the page may load scripts and styles from any https origin" });

  for (const key of ["externalHosts", "embeds", "embedAncestors"] as const) {
    next[key].forEach((origin, i) => {
      if (!originCovered(origin, previous[key])) push(false, { path: at(at(ROOT, key), i), message: `new origin ${origin} in ${key}` });
    });
  }

  const prevTargets = webhookTargets(previous);
  for (const t of webhookTargets(next)) {
    if (!prevTargets.some((p) => p.target === t.target)) push(false, { path: t.path, message: `new webhook target ${t.target}` });
  }

  push(false, ...routeBreaks(previous, next));
  return breaks;
}

/** Ways a collection's new definition can refuse or hide rows that exist today. */
function strandings(prev: CompiledCollection, cur: CompiledCollection, cPath: string): CompatBreak[] {
  const out: CompatBreak[] = [];
  if (!prev.schema && cur.schema && !acceptsEverything(cur.schema.schema)) {
    out.push({ path: at(cPath, "schema"), message: `a schema was added to the schemaless collection "${cur.name}"; existing rows may not match it` });
  } else if (prev.schema && cur.schema) {
    for (const b of schemaTightenings(prev.schema.schema, cur.schema.schema, at("$defs", cur.schema.def))) {
      out.push({ path: b.path, message: `schema of collection "${cur.name}" tightened: ${b.message}` });
    }
  }
  if (prev.storage === "document" && cur.storage !== "document") {
    out.push({ path: at(cPath, "storage"), message: `storage "document" removed: the row byte cap drops from ${prev.maxRowBytes} to ${cur.maxRowBytes}` });
  }
  if (cur.appendOnly && !prev.appendOnly) out.push({ path: at(cPath, "appendOnly"), message: `collection "${cur.name}" made append-only` });
  if (cur.keyClaim === "free" && prev.keyClaim !== "free") {
    out.push({ path: at(cPath, "keyClaim"), message: `keyClaim loosened from "${prev.keyClaim}" to "free"` });
  }
  return out;
}

// --- reach of a permission list -------------------------------------------------------
//
// A list's reach is a set of (population class, row scope) tokens. Classes: `owner`,
// `member` (plain members; the owner is one too), `anon` (no role at all), and `role:<Q>`
// (a holder of custom role Q who is not a member, e.g. through a grant link). A custom
// role R reaches every class role:Q whose `includes` expand to R. The scope is `all`,
// `creator`, `editor` or `rel:<name>:<field>`. The new list widens when it has a token
// the old list does not cover (same class with the same scope or with `all`).

function classesOf(subject: Subject, roles: Record<string, CompiledRole>, roleNames: string[]): string[] {
  const everyRole = roleNames.map((r) => `role:${r}`);
  switch (subject.who) {
    case "anyone":
      return ["owner", "member", "anon", ...everyRole];
    case "member":
      return ["owner", "member"];
    case "owner":
      return ["owner"];
    case "role":
      return Object.entries(roles).filter(([, def]) => def.expands.includes(subject.role!)).map(([q]) => `role:${q}`);
  }
}

function scopeOf(subject: Subject, collection: CompiledCollection | undefined): string {
  if (subject.scope !== "relation") return subject.scope;
  const field = collection?.relations[subject.relation!]?.field ?? "?";
  return `rel:${subject.relation}:${field}`;
}

function reach(list: Subject[], manifest: CompiledManifest, collection: string, roleNames: string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of list) {
    const scope = scopeOf(s, manifest.collections[collection]);
    for (const c of classesOf(s, manifest.roles, roleNames)) {
      if (!out.has(c)) out.set(c, new Set());
      out.get(c)!.add(scope);
    }
  }
  return out;
}

function widenedReach(
  list: "read" | "countRead",
  prevList: Subject[],
  nextList: Subject[],
  previous: CompiledManifest,
  next: CompiledManifest,
  roleNames: string[],
  path: string,
  collection: string,
): CompatBreak[] {
  const before = reach(prevList, previous, collection, roleNames);
  const after = reach(nextList, next, collection, roleNames);
  const widened: string[] = [];
  for (const [cls, scopes] of after) {
    const had = before.get(cls);
    for (const scope of scopes) {
      if (had && (had.has("all") || had.has(scope))) continue;
      widened.push(scope === "all" ? cls : `${cls} (${scope.replace(/^rel:([^:]*):.*$/, "relation $1")} rows)`);
    }
  }
  if (widened.length === 0) return [];
  const was = prevList.length === 0 ? "nobody" : prevList.map((s) => s.subject).join(", ");
  const now = nextList.map((s) => s.subject).join(", ");
  return [{
    path,
    message: `${list} of collection "${collection}" now reaches further (${widened.join(", ")}): was [${was}], now [${now}]`,
  }];
}

// --- outbound targets and routes -------------------------------------------------------

function webhookTargets(m: CompiledManifest): { target: string; path: string }[] {
  const out: { target: string; path: string }[] = [];
  m.webhooks.forEach((w) => {
    const path = at(at(at(ROOT, "webhooks"), w.index), w.url ? "url" : "urlFromSetting");
    out.push({ target: w.url ? ruleTarget(w.url, w.connection) : `setting:${w.urlFromSetting}`, path });
  });
  m.schedules.forEach((s) => {
    if (s.action.kind !== "webhook") return;
    const path = at(at(at(ROOT, "schedules"), s.index), s.action.url ? "url" : "urlFromSetting");
    out.push({ target: s.action.url ? ruleTarget(s.action.url, s.action.connection) : `setting:${s.action.urlFromSetting}`, path });
  });
  return out;
}

function routeBreaks(previous: CompiledManifest, next: CompiledManifest): CompatBreak[] {
  const out: CompatBreak[] = [];
  next.routes.forEach((route, i) => {
    const path = at(at(ROOT, "routes"), i);
    const old = previous.routes.find((r) => r.shape === route.shape);
    if (!old) {
      out.push({ path, message: `route ${route.path} added` });
      return;
    }
    const reasons: string[] = [];
    if (old.collection !== route.collection) reasons.push(`serves collection "${route.collection}" instead of "${old.collection}"`);
    if (old.matchOn !== route.matchOn) reasons.push(`matches on "${route.matchOn}" instead of "${old.matchOn}"`);
    const oldFields = routeFields(old);
    const added = routeFields(route).filter((f) => !oldFields.includes(f));
    if (added.length > 0) reasons.push(`renders more fields (${added.join(", ")})`);
    if (route.indexable && !old.indexable) reasons.push("became indexable");
    if (reasons.length > 0) out.push({ path, message: `route ${route.path} widened: ${reasons.join("; ")}` });
  });
  return out;
}

export function sameManifest(a: CompiledManifest, b: CompiledManifest): boolean {
  return deepEqual(a.source, b.source);
}
