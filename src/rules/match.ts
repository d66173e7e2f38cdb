/**
 * Which manifest rules a row write triggers (notify, webhooks, agentTasks). Pure: given
 * the compiled manifest and one change (op, collection, data before and after, author),
 * it returns the matching rules. The AppStore records each match in its outbox in the
 * same transaction as the row; the rule engines act on them later.
 *
 * Semantics: a rule fires on its `on` op for its collection; a level condition tests the
 * new data (the row-query comparison rules: no cross-type coercion, missing matches
 * nothing); an edge condition (`changedTo`) fires when the field takes that value now
 * and did not before; author-kind conditions test who wrote. Writes by machines (ingest
 * hooks, service credentials, the system) fire webhooks and agent tasks only when the
 * rule opts in through `machineAuthorKinds` or names the kind in `authorKindIn`.
 */
import type { AuthorKind, CompiledManifest, Condition } from "../manifest";
import { matchesCond } from "../permissions";

export type EffectKind = "notify" | "webhooks" | "agentTasks";

export interface Change {
  op: "create" | "update";
  collection: string;
  before: unknown;
  after: unknown;
  authorKind: AuthorKind;
}

export interface RuleMatch {
  kind: EffectKind;
  ruleId: string;
}

const MACHINE_KINDS: AuthorKind[] = ["hook", "service", "system"];
const LEVEL_OPS = { equals: "eq", notEquals: "neq", in: "in", notIn: "notIn", gt: "gt", lt: "lt", gte: "gte", lte: "lte" } as const;

function field(data: unknown, name: string): unknown {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[name] : undefined;
}

export function conditionHolds(when: Condition | null, change: Change): boolean {
  if (!when) return true;
  switch (when.kind) {
    case "level":
      return matchesCond({ field: when.field, op: LEVEL_OPS[when.op], value: when.value }, change.after);
    case "edge":
      return field(change.after, when.field) === when.value && field(change.before, when.field) !== when.value;
    case "authorKind":
      return when.op === "in" ? when.kinds.includes(change.authorKind) : !when.kinds.includes(change.authorKind);
  }
}

function machinesAdmitted(rule: { when: Condition | null; machineAuthorKinds: ("hook" | "service")[] }, kind: AuthorKind): boolean {
  if (!MACHINE_KINDS.includes(kind)) return true;
  if ((rule.machineAuthorKinds as AuthorKind[]).includes(kind)) return true;
  return rule.when?.kind === "authorKind" && rule.when.op === "in" && rule.when.kinds.includes(kind);
}

export function matchRules(manifest: CompiledManifest, change: Change): RuleMatch[] {
  const applies = (rule: { on: "create" | "update"; collection: string; when: Condition | null }) =>
    rule.on === change.op && rule.collection === change.collection && conditionHolds(rule.when, change);
  return [
    ...manifest.notify.filter(applies).map((r) => ({ kind: "notify" as const, ruleId: r.id })),
    ...manifest.webhooks.filter((r) => applies(r) && machinesAdmitted(r, change.authorKind)).map((r) => ({ kind: "webhooks" as const, ruleId: r.id })),
    ...manifest.agentTasks.filter((r) => applies(r) && machinesAdmitted(r, change.authorKind)).map((r) => ({ kind: "agentTasks" as const, ruleId: r.id })),
  ];
}

