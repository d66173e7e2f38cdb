/**
 * Cloudflare refuses SQL that the local runtime runs: a statement that binds more than 100
 * parameters, a statement text over 100,000 bytes, and a string or BLOB over 2,000,000
 * bytes, in D1 and in a Durable Object's SQLite alike. A statement that grows with its
 * input (a list of ids, a batch, a stored body) passes every local test and fails only in
 * production. In development mode the relay holds itself to those limits, so any test or
 * local run that would break in production breaks here, naming the statement. In
 * production nothing is wrapped (Cloudflare enforces the limits itself).
 *
 * Not held here: 32 arguments to one SQL function and 50-byte LIKE or GLOB patterns (the
 * relay's SQL calls no function with a list's worth of arguments and uses neither operator).
 */
import { config } from "../config";
import { observedD1 } from "./observed-d1";
import { utf8Bytes } from "../bytes";

/** Cloudflare's documented limit on parameters bound to one statement (D1 and Durable Object SQLite). */
export const MAX_BOUND_PARAMETERS = 100;
/** Cloudflare's documented limit on one statement's SQL text, in bytes. */
export const MAX_STATEMENT_BYTES = 100_000;
/** Cloudflare's documented limit on one string or BLOB value (and one row), in bytes. */
export const MAX_VALUE_BYTES = 2_000_000;

/** A string's UTF-8 length, counted only when it could be over `limit` (a UTF-16 unit is at most 3 bytes). */
function mayExceed(text: string, limit: number): number | null {
  if (text.length * 3 <= limit) return null;
  const bytes = utf8Bytes(text);
  return bytes > limit ? bytes : null;
}

function refuse(what: string, query: string): never {
  throw new Error(`${what}; Cloudflare refuses it (D1 and Durable Object SQLite): ${query.slice(0, 200)}`);
}

function requireStatementWithinLimit(query: string): void {
  const bytes = mayExceed(query, MAX_STATEMENT_BYTES);
  if (bytes !== null) refuse(`A statement is ${bytes} bytes long, over the ${MAX_STATEMENT_BYTES} Cloudflare takes`, query);
}

function requireParamsWithinLimit(params: unknown[], query: string): void {
  if (params.length > MAX_BOUND_PARAMETERS) refuse(`A statement binds ${params.length} parameters; Cloudflare takes at most ${MAX_BOUND_PARAMETERS}`, query);
  params.forEach((value, index) => {
    const bytes = typeof value === "string" ? mayExceed(value, MAX_VALUE_BYTES)
      : value instanceof ArrayBuffer || ArrayBuffer.isView(value) ? (value.byteLength > MAX_VALUE_BYTES ? value.byteLength : null) : null;
    if (bytes !== null) refuse(`A statement binds a value of ${bytes} bytes (parameter ${index + 1}), over the ${MAX_VALUE_BYTES} Cloudflare takes`, query);
  });
}

const checkedEnvs = new WeakMap<object, Env>();

/** `env` with its D1 binding held to the production limits in development mode; `env` itself otherwise. */
export function withProductionLimits(env: Env): Env {
  if (!config(env).development) return env;
  let checked = checkedEnvs.get(env);
  if (!checked) {
    checked = { ...env, DB: observedD1(env.DB, { prepared: requireStatementWithinLimit, bound: requireParamsWithinLimit }) };
    checkedEnvs.set(env, checked);
  }
  return checked;
}

/** Holds a Durable Object's SQLite to the production limits in development mode (its `exec` checked in place). */
export function holdSqlToProductionLimits(env: Env, sql: SqlStorage): void {
  if (!config(env).development) return;
  const exec = sql.exec.bind(sql);
  Object.defineProperty(sql, "exec", {
    configurable: true,
    value: (query: string, ...bindings: unknown[]) => {
      requireStatementWithinLimit(query);
      requireParamsWithinLimit(bindings, query);
      return exec(query, ...bindings);
    },
  });
}
