/**
 * Cloudflare refuses an SQL statement that binds more than 100 parameters, in D1 and in a
 * Durable Object's SQLite alike, but the local runtime runs it: a statement that grows
 * with its input (a list of ids, a batch) passes every local test and fails only in
 * production. In development mode the relay holds itself to that limit, so any test or
 * local run that would break in production breaks here, naming the statement. In
 * production nothing is wrapped (Cloudflare enforces the limit itself).
 */
import { config } from "../config";
import { observedD1 } from "./observed-d1";

/** Cloudflare's documented limit on parameters bound to one statement (D1 and Durable Object SQLite). */
export const MAX_BOUND_PARAMETERS = 100;

function requireWithinLimit(count: number, query: string): void {
  if (count > MAX_BOUND_PARAMETERS) {
    throw new Error(`A statement binds ${count} parameters; Cloudflare takes at most ${MAX_BOUND_PARAMETERS} (D1 and Durable Object SQLite): ${query.slice(0, 200)}`);
  }
}

const checkedEnvs = new WeakMap<object, Env>();

/** `env` with its D1 binding held to the production limit in development mode; `env` itself otherwise. */
export function withProductionLimits(env: Env): Env {
  if (!config(env).development) return env;
  let checked = checkedEnvs.get(env);
  if (!checked) {
    checked = { ...env, DB: observedD1(env.DB, { bound: requireWithinLimit }) };
    checkedEnvs.set(env, checked);
  }
  return checked;
}

/** Holds a Durable Object's SQLite to the production limit in development mode (its `exec` checked in place). */
export function holdSqlToProductionLimits(env: Env, sql: SqlStorage): void {
  if (!config(env).development) return;
  const exec = sql.exec.bind(sql);
  Object.defineProperty(sql, "exec", {
    configurable: true,
    value: (query: string, ...bindings: unknown[]) => {
      requireWithinLimit(bindings.length, query);
      return exec(query, ...bindings);
    },
  });
}
