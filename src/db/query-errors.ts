/**
 * Log lines for failed statements, without the values bound to them. drizzle wraps a
 * failing statement in an error whose message (and so its stack, which a log line prints)
 * lists every bound value, and some statements bind secrets in clear: an ingest hook's URL
 * and signing secrets, an app's webhook signing secret, each beside the live one it
 * replaces. Every place that logs an unexpected failure hands the error through
 * `withoutBoundValues` first: the SQL text and the driver's own error stay, the values go.
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
