/**
 * The pure half of an inbound delivery (WIRE §5.5 ingest, §6.3): reading a dot-path into a
 * provider's body, turning the body into row data with the rule's `map` (or the default
 * `{ hook, payload, receivedAt }`), finding the delivery's dedupe value (a body path or a
 * request header) and reading the optional top-level `if_match`. Nothing here touches
 * storage, so each rule is unit-tested on its own.
 */
import type { IngestRule, JsonValue } from "../../manifest";

/** What a dot-path found: the value (JSON `null` included), or nothing. */
export type Found = { found: true; value: JsonValue } | { found: false };

/** Follows `a.b.0.c` through objects (own keys) and arrays (whole-number indexes). */
export function resolvePath(body: JsonValue, path: string): Found {
  let current: JsonValue = body;
  for (const segment of path.split(".")) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment) || Number(segment) >= current.length) return { found: false };
      current = current[Number(segment)];
    } else if (typeof current === "object" && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, JsonValue>)[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/**
 * The row a body becomes: each mapped field from its path (a path that finds nothing
 * leaves the field out; an explicit null is written as null), or without a map the whole
 * body under `payload` beside the hook's name and when it arrived.
 */
export function mapBody(rule: Pick<IngestRule, "name" | "map">, body: JsonValue, receivedAt: string): JsonValue {
  if (rule.map === null) return { hook: rule.name, payload: body, receivedAt };
  const row: Record<string, JsonValue> = {};
  for (const [field, path] of Object.entries(rule.map)) {
    const found = resolvePath(body, path);
    if (found.found) row[field] = found.value;
  }
  return row;
}

/**
 * The delivery's dedupe value, or null when the rule has no dedupeKey or it resolves to
 * nothing usable: a body path must find a string, number or boolean (numbers and booleans
 * as their text); a header is looked up case-insensitively and is absent in a backfill.
 */
export function dedupeValue(rule: Pick<IngestRule, "dedupeKey">, body: JsonValue, headers: Headers | null): string | null {
  const key = rule.dedupeKey;
  if (key === null) return null;
  if (key.kind === "header") return headers?.get(key.header) ?? null;
  const found = resolvePath(body, key.path);
  if (!found.found) return null;
  const { value } = found;
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : null;
}

/** How the rule's dedupeKey reads, for the journal (`header:x-github-delivery`, `delivery.id`). */
export function dedupeKeyText(rule: Pick<IngestRule, "dedupeKey">): string | null {
  const key = rule.dedupeKey;
  if (key === null) return null;
  return key.kind === "header" ? `header:${key.header}` : key.path;
}

/**
 * The body's top-level `if_match` for an upsert rule: absent is undefined; a non-negative
 * integer is the version the row must be at; anything else is malformed (the delivery
 * fails with invalid_request). Append rules never read it.
 */
export function ifMatchOf(rule: Pick<IngestRule, "mode">, body: JsonValue): { ok: true; value: number | undefined } | { ok: false } {
  if (rule.mode !== "upsert" || typeof body !== "object" || body === null || Array.isArray(body) || !Object.hasOwn(body, "if_match")) {
    return { ok: true, value: undefined };
  }
  const value = (body as Record<string, JsonValue>).if_match;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? { ok: true, value } : { ok: false };
}

/** A handshake's challenge: a string `challenge` at the top of a parsed body. */
export function challengeOf(body: JsonValue): string | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const value = (body as Record<string, JsonValue>).challenge;
  return typeof value === "string" ? value : null;
}
