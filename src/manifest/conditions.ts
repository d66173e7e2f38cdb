/**
 * The small expression language shared by the rule arrays (WIRE §5.4): `when` conditions
 * (one field, one operator; or an author-kind filter) and `{{field}}` templates. Kept
 * apart from rules.ts so notify, schedules, webhooks and agent tasks validate them the
 * same way and the rule engines read one normalised `Condition` shape.
 */
import type { ErrorCode } from "../errors";
import { at, expectObject, expectString, fail, FIELD_NAME } from "./read";
import type { AuthorKind, CompiledCollection, Condition, LevelOp, Scalar } from "./types";

export const AUTHOR_KINDS: AuthorKind[] = ["human", "agent", "grant", "visitor", "anon", "service", "hook", "system"];
export const MACHINE_AUTHOR_KINDS: AuthorKind[] = ["service", "hook", "system"];
const SCALAR_OPS: LevelOp[] = ["equals", "notEquals", "gt", "lt", "gte", "lte"];
const LIST_OPS: LevelOp[] = ["in", "notIn"];
const OPERATORS = [...SCALAR_OPS, ...LIST_OPS, "changedTo"];

/** A field the manifest names: an identifier, and a declared property when a schema exists. */
export function checkField(field: unknown, collection: CompiledCollection, path: string, code: ErrorCode): string {
  const name = expectString(field, path, code);
  if (!FIELD_NAME.test(name)) fail(code, path, `"${name}" is not a top-level field name (letters, digits, _; no paths)`);
  if (collection.schema && !collection.schema.properties.includes(name)) {
    fail(code, path, `"${name}" is not a property of collection "${collection.name}"'s schema`);
  }
  return name;
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

export function compileCondition(
  value: unknown,
  path: string,
  code: ErrorCode,
  opts: { collection: CompiledCollection; allowEdge: boolean; on: "create" | "update" | null },
): Condition {
  const when = expectObject(value, path, code);
  const keys = Object.keys(when);
  if ("authorKindIn" in when || "authorKindNotIn" in when) {
    if (keys.length !== 1) fail(code, path, "authorKindIn / authorKindNotIn must be the only key of when");
    const key = keys[0] as "authorKindIn" | "authorKindNotIn";
    const kPath = at(path, key);
    const list = when[key];
    if (!Array.isArray(list) || list.length === 0) fail(code, kPath, "must be a non-empty array of author kinds");
    const kinds = list.map((k, i) => {
      if (typeof k !== "string" || !AUTHOR_KINDS.includes(k as AuthorKind)) fail(code, at(kPath, i), `must be one of ${AUTHOR_KINDS.join(", ")}`);
      return k as AuthorKind;
    });
    if (new Set(kinds).size !== kinds.length) fail(code, kPath, "must not repeat a kind");
    return { kind: "authorKind", op: key === "authorKindIn" ? "in" : "notIn", kinds };
  }
  for (const key of keys) {
    if (key !== "field" && !OPERATORS.includes(key)) fail(code, at(path, key), `unknown key "${key}" (use field plus one of ${OPERATORS.join(", ")})`);
  }
  if (!("field" in when)) fail(code, at(path, "field"), "is required");
  const field = checkField(when.field, opts.collection, at(path, "field"), code);
  const ops = keys.filter((k) => k !== "field");
  if (ops.length !== 1) fail(code, path, `must hold exactly one operator (${OPERATORS.join(", ")})`);
  const op = ops[0];
  const opPath = at(path, op);
  const operand = when[op];
  if (op === "changedTo") {
    if (!opts.allowEdge) fail(code, opPath, "changedTo is an edge condition and is not allowed here (schedules take level conditions only)");
    if (opts.on !== "update") fail(code, opPath, 'changedTo fires only on update; set on: "update"');
    if (!isScalar(operand)) fail(code, opPath, "must be a string, number or boolean");
    return { kind: "edge", field, op: "changedTo", value: operand };
  }
  if (LIST_OPS.includes(op as LevelOp)) {
    if (!Array.isArray(operand) || operand.length === 0) fail(code, opPath, "must be a non-empty array of scalars");
    operand.forEach((v, i) => {
      if (!isScalar(v)) fail(code, at(opPath, i), "must be a string, number or boolean");
    });
    return { kind: "level", field, op: op as LevelOp, value: operand as Scalar[] };
  }
  if (!isScalar(operand)) fail(code, opPath, "must be a string, number or boolean");
  return { kind: "level", field, op: op as LevelOp, value: operand };
}

export const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Checks `{{field}}` placeholders of a plain-text template; returns the fields named. */
export function checkTemplate(text: string, path: string, code: ErrorCode): string[] {
  const fields: string[] = [];
  const stripped = text.replace(PLACEHOLDER, (_m, name: string) => {
    if (!FIELD_NAME.test(name)) fail(code, path, `placeholder {{${name}}} must name one top-level field (no expressions)`);
    fields.push(name);
    return "";
  });
  if (stripped.includes("{{") || stripped.includes("}}")) fail(code, path, "has an unbalanced {{ or }}");
  return fields;
}

/**
 * A webhook `bodyTemplate`: JSON text whose `{{field}}` placeholders are replaced by the
 * JSON encoding of the value, so the template must be valid JSON once each placeholder is
 * replaced by a JSON value.
 */
export function checkBodyTemplate(value: unknown, path: string, code: ErrorCode): string {
  const text = expectString(value, path, code, { nonBlank: true });
  checkTemplate(text, path, code);
  try {
    JSON.parse(text.replace(PLACEHOLDER, "null"));
  } catch {
    fail(code, path, "must be JSON text once each {{field}} is replaced by a JSON value (leave placeholders unquoted in value positions)");
  }
  return text;
}
