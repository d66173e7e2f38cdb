/**
 * Log lines for failed statements, without the values bound to them. drizzle wraps a
 * failing statement in an error whose message (and so its stack, which a log line prints)
 * lists every bound value, and some statements bind secrets in clear: an ingest hook's URL
 * and signing secrets, an app's webhook signing secret, each beside the live one it
 * replaces. Every place that logs an unexpected failure hands the error through
 * `withoutBoundValues` first: the SQL text and the driver's own error stay, the values go.
 * `errorLogLine` goes further for the log lines of background work (effects, waitUntil
 * tails): one line of name, message and code for the error and each cause, no stack and
 * no value ever bound to a statement (test/structure/error-log-lines.test.ts keeps every
 * console call from logging a caught error whole).
 */
import { DrizzleQueryError } from "drizzle-orm";

/** `err` as it may be logged: a failed query (anywhere in its cause chain) loses its bound values; anything else is returned as it is. */
export function withoutBoundValues(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  if (err instanceof DrizzleQueryError) {
    const redacted = new Error(`Failed query: ${err.query}`, { cause: withoutBoundValues(err.cause) });
    redacted.name = "DrizzleQueryError";
    // The original stack is its message (values included) and then the frames: keep only the frames.
    const header = `${err.name}: ${err.message}`;
    const frames = err.stack?.startsWith(header) ? err.stack.slice(header.length) : "";
    redacted.stack = `${redacted.name}: ${redacted.message}${frames}`;
    return redacted;
  }
  if (err.cause instanceof Error) {
    const cause = withoutBoundValues(err.cause);
    if (cause !== err.cause) err.cause = cause;
  }
  return err;
}

/** How many causes deep a log line follows an error. */
const MAX_CAUSES = 4;

/** The part of a drizzle-like message that lists the bound values (`Failed query: …\nparams: …`). */
const BOUND_VALUES = /\n\s*params:[\s\S]*$/;

function describeOne(value: unknown): string {
  if (typeof value === "string") return value.replace(BOUND_VALUES, "");
  if (typeof value !== "object" || value === null) return `a thrown ${value === null ? "null" : typeof value}`;
  const { name, message, code } = value as { name?: unknown; message?: unknown; code?: unknown };
  const label = typeof name === "string" && name !== "" ? name : value instanceof Error ? "Error" : "a thrown object";
  const text = typeof message === "string" ? message.replace(BOUND_VALUES, "") : "";
  const coded = typeof code === "string" || typeof code === "number" ? ` [code ${code}]` : "";
  return `${label}${text ? `: ${text}` : ""}${coded}`;
}

/**
 * Any thrown value as one safe log line: the name, message and code of the error and of
 * each cause, a failed query's bound values left out (its SQL text stays), never the
 * stack, the params or any other field.
 */
export function errorLogLine(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = withoutBoundValues(err);
  do {
    parts.push(describeOne(current));
    current = current instanceof Error ? current.cause : undefined;
  } while (current !== undefined && parts.length <= MAX_CAUSES);
  return parts.join(" <- caused by ").replace(/\s*\n\s*/g, " ");
}
