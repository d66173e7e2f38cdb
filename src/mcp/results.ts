/**
 * Tool results in the shape of WIRE-MCP §1.4: success is one text item holding the value
 * as 2-space JSON; failure is the same with `isError: true` and an object whose `error` is
 * the code as a string: the relay's envelope flattened for a route's refusal (with a
 * `report` sentence when the relay itself failed), `{ error: "invalid_args", message }`
 * for a tool's own argument check, `{ error: "internal", message }` for anything else.
 */
import { errorLogLine } from "../db/query-errors";
import { catalogue, RelayError } from "../errors";
import { RelayCallError, type RelayFailure } from "./relay-call";

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: true;
}

const REPORT = "This is a fault of the relay, not of your request. Please file it once with the feedback tool (action create, type bug) giving the error code, what you expected and the arguments you sent, unless you already filed it.";

export function success(value: unknown): ToolResult {
  return { content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }] };
}

function failure(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], isError: true };
}

function relayShape(f: RelayFailure): Record<string, unknown> {
  return {
    error: f.code, status: f.status, message: f.message,
    ...(f.hint !== undefined ? { hint: f.hint } : {}),
    ...(f.details !== undefined ? { details: f.details } : {}),
    ...(f.retryable !== undefined ? { retryable: f.retryable } : {}),
    ...(f.status >= 500 ? { report: REPORT } : {}),
  };
}

/** Any throw from a tool, rendered. */
export function failed(err: unknown): ToolResult {
  if (err instanceof RelayCallError) return failure(relayShape(err.failure));
  if (err instanceof RelayError) {
    if (err.code === "invalid_args") return failure({ error: "invalid_args", message: err.message });
    const entry = catalogue[err.code];
    return failure(relayShape({ code: err.code, status: entry.status, message: err.message, hint: entry.hint, retryable: entry.retryable, ...(err.details ? { details: err.details } : {}) }));
  }
  console.error("mcp tool failed", errorLogLine(err));
  // The thrown value's own text stays in the log: a failed query's message can carry the
  // statement and its bound values, and none of it is the caller's to act on.
  return failure({ error: "internal", message: "The tool failed inside the relay; the failure was logged. Try again, and report it if it persists." });
}

/** A tool's own argument check failed (WIRE-MCP §1.4 `invalid_args`). */
export function invalidArgs(message: string): RelayError {
  return new RelayError("invalid_args", message);
}
