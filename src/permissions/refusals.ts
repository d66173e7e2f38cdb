/**
 * Every refusal the permission engine can answer with, built from the one error
 * catalogue. Keeping the factories together fixes the message and `details` of each code
 * in one place, so a route, the AppStore and the tests see the same words, and a refusal
 * that must hide a row (`row_not_found`) can never carry details that name it.
 */
import { RelayError, type ErrorCode } from "../errors";
import { collectionNotFound, type Subject } from "../manifest";

export interface Refusal {
  ok: false;
  code: ErrorCode;
  error: RelayError;
}

function refuse(code: ErrorCode, message?: string, details?: Record<string, unknown>): Refusal {
  return { ok: false, code, error: new RelayError(code, message, details) };
}

const named = (list: Subject[]) => (list.length ? list.map((s) => s.subject).join(", ") : "nobody");

export const refusals = {
  collectionNotFound: (collection: string): Refusal => ({ ok: false, code: "collection_not_found", error: collectionNotFound(collection) }),
  /** Deliberately without the key: a hidden row and a missing row must read the same. */
  rowNotFound: () => refuse("row_not_found"),
  readForbidden: (collection: string, list: Subject[]) =>
    refuse("collection_read_forbidden", `You are not in the read list of "${collection}" (read: ${named(list)}).`, {
      collection, allowed: list.map((s) => s.subject),
    }),
  countForbidden: (collection: string, list: Subject[] | null) =>
    refuse("collection_count_forbidden", list === null
      ? `Collection "${collection}" does not declare countRead.`
      : `You are not in the countRead list of "${collection}" (countRead: ${named(list)}).`, {
      collection, allowed: list === null ? null : list.map((s) => s.subject),
    }),
  writeForbidden: (collection: string, listName: "write" | "update", list: Subject[], reason?: string) =>
    refuse("collection_write_forbidden", reason ?? `You are not in the ${listName} list of "${collection}" for this row (${listName}: ${named(list)}).`, {
      collection, list: listName, allowed: list.map((s) => s.subject),
    }),
  deleteForbidden: (collection: string, list: Subject[]) =>
    refuse("collection_delete_forbidden", `You are not in the delete list of "${collection}" for this row (delete: ${named(list)}).`, {
      collection, allowed: list.map((s) => s.subject),
    }),
  appendOnly: (collection: string) =>
    refuse("append_only", `Collection "${collection}" is append-only: rows cannot be updated or deleted.`, { collection }),
  purgeForbidden: () => refuse("purge_forbidden"),
  ownerOnly: (what: string) => refuse("forbidden", `Only the owner or the owning agent may ${what}.`),
  credentialScope: (collection: string, op: string, reason: "op" | "own") =>
    refuse("credential_scope_forbidden", reason === "own"
      ? `This credential may ${op} in "${collection}" only rows it wrote last.`
      : `This credential's allowlist does not cover ${op} on "${collection}".`, { collection, op }),
  immutable: (collection: string, field: string) =>
    refuse("invalid_request", `Field "${field}" of "${collection}" is immutable: it cannot change after create.`, { field }),
  relationSet: (collection: string, relation: string, field: string) =>
    refuse("relation_set_forbidden", `Field "${field}" (relation "${relation}" of "${collection}") may be changed only by the row's creator.`, {
      relation, field,
    }),
};

/** The 409 the AppStore answers when an anonymous budget axis of `collection` is spent for the day. */
export function anonBudgetExceeded(collection: string, scope: "perIpPerDay" | "perAppPerDay", limit: number): RelayError {
  return new RelayError("anon_write_budget_exceeded", `The anonymous write budget of "${collection}" is spent for today (${scope}).`, { scope, limit });
}
