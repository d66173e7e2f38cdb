/**
 * The fields a writer does not set: serverSet fields (filled by the relay on create from a
 * lookup, a sum or a product, and echoed unchanged on update) and immutable fields a PATCH
 * leaves out (carried from the stored row). Both turn the data a caller sent into the data
 * that is checked and stored, before any other check runs.
 */
import { RelayError } from "../../src/errors";
import type { CompiledCollection } from "../../src/manifest";
import { liveRow } from "./rows-scope";

/** Immutable fields a PATCH leaves out keep their stored value (the engine refused any change). */
export function carryImmutable(col: CompiledCollection, data: unknown, previous: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (col.immutable.length === 0 || !isObject(data) || !isObject(previous)) return data;
  const out: Record<string, unknown> = { ...data };
  for (const field of col.immutable) {
    if (!Object.hasOwn(out, field) && Object.hasOwn(previous, field)) out[field] = previous[field];
  }
  return out;
}

/** Fills serverSet fields on create; on update a supplied value must echo the stored one. */
export function applyServerSet(sql: SqlStorage, col: CompiledCollection, data: unknown, previous: Record<string, unknown> | null): unknown {
  const fields = Object.entries(col.serverSet);
  if (fields.length === 0 || typeof data !== "object" || data === null || Array.isArray(data)) return data;
  const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  for (const [field, rule] of fields) {
    if (previous) {
      if (field in out && JSON.stringify(out[field]) !== JSON.stringify(previous[field])) {
        throw new RelayError("server_set_field_supplied", `"${field}" is set by the relay; leave it out or send its current value.`, { field });
      }
      if (previous[field] !== undefined) out[field] = previous[field];
      continue;
    }
    if (field in out) throw new RelayError("server_set_field_supplied", `"${field}" is set by the relay; leave it out.`, { field });
    if (rule.kind === "lookup") {
      const sourceKey = out[rule.keyField];
      const source = typeof sourceKey === "string" ? liveRow(sql, rule.from, sourceKey) : null;
      if (!source) {
        throw new RelayError("server_set_source_missing", `No row "${String(sourceKey)}" in "${rule.from}" to take "${rule.take}" from.`, { field, from: rule.from });
      }
      out[field] = (JSON.parse(source.data) as Record<string, unknown>)?.[rule.take];
    } else {
      const values = rule.operands.map((o) => out[o]);
      if (!values.every((v) => typeof v === "number")) {
        throw new RelayError("server_set_source_missing", `"${field}" needs numbers in ${rule.operands.join(", ")}.`, { field });
      }
      out[field] = (values as number[]).reduce((a, b) => (rule.kind === "sum" ? a + b : a * b), rule.kind === "sum" ? 0 : 1);
    }
  }
  return out;
}
