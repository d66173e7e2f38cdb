// The D1 fault probe, shared by the fault tests that break a route on purpose: a write is
// sent through the Worker's real fetch with a database that fails after 0, 1, 2, ...
// statements (failing-db.ts) until it goes through, and every refusal is checked: the
// catalogue's 5xx envelope, and, read back with the real database, the state exactly as
// before the attempt or the write whole (as a success leaves it), never a mix.
import { expect } from "vitest";
import { catalogue, type ErrorCode } from "../../../src/errors";
import { buildRequest, dispatch, type CallOptions } from "../helpers";
import { failingDb } from "./failing-db";

export interface Probe<State> {
  path: string;
  options: () => CallOptions;
  /** What the write touches, read with the real database. */
  state: () => Promise<State>;
  /** True when the write is whole (as a success leaves it). */
  whole: (before: State) => Promise<boolean>;
}

export interface ProbeResult { refused: number; statuses: number[]; wholeAfterRefusal: number; succeededAfter: number }

/** Asserts a refused attempt's answer: a 5xx catalogue envelope. */
export async function expectServerEnvelope(res: Response): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBeGreaterThanOrEqual(500);
  const body = JSON.parse(text) as { error: { code: ErrorCode; hint: string; retryable: boolean } };
  expect(Object.keys(body)).toEqual(["error"]);
  const entry = catalogue[body.error.code];
  expect(entry, body.error.code).toBeDefined();
  expect({ code: body.error.code, status: res.status, hint: body.error.hint, retryable: body.error.retryable }).toEqual({ code: body.error.code, status: entry.status, hint: entry.hint, retryable: entry.retryable });
}

/**
 * Fails the database after 0, 1, 2, ... statements (all later ones, or only `failures` of
 * them: a blip) until the write goes through; checks every refusal. A refusal that left
 * the write whole ends the probe (the next attempt would be a second write).
 */
export async function probe<State>(route: Probe<State>, failures = Infinity, limit = 60): Promise<ProbeResult> {
  const result: ProbeResult = { refused: 0, statuses: [], wholeAfterRefusal: 0, succeededAfter: -1 };
  for (let allowed = 0; allowed < limit; allowed += 1) {
    const before = await route.state();
    const res = await dispatch(buildRequest(route.path, route.options()), { DB: failingDb(allowed, failures).binding });
    if (res.ok) {
      await res.arrayBuffer();
      expect(await route.whole(before), `${route.path}: whole after success`).toBe(true);
      result.succeededAfter = allowed;
      console.log(`${route.path}: ${JSON.stringify(result)}`);
      return result;
    }
    result.refused += 1;
    result.statuses.push(res.status);
    await expectServerEnvelope(res);
    const after = await route.state();
    if (JSON.stringify(after) === JSON.stringify(before)) continue;
    // Not as before: then it must be whole, and the next attempt would be a second write.
    expect(await route.whole(before), `${route.path} after ${allowed} statements: neither unchanged nor whole: ${JSON.stringify({ before, after })}`).toBe(true);
    result.wholeAfterRefusal += 1;
    console.log(`${route.path}: ${JSON.stringify(result)}`);
    return result;
  }
  throw new Error(`${route.path} never succeeded within ${limit} statements`);
}
