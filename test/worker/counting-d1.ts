// The real D1 binding wrapped to count its round trips: each statement run on its own
// (all, raw, first, run) and each batch is one trip to the database. Tests use it to show
// that a path reads nothing (a reused lookup) or how many trips it makes (a claim, an ack),
// and how many parameters its statements bind.
import { env } from "cloudflare:test";
import { observedD1 } from "../../src/db/observed-d1";

export interface CountingD1 {
  /** The wrapped binding; the database underneath is the test's real one. */
  DB: D1Database;
  /** Statements run on their own so far. */
  statements(): number;
  /** Round trips so far: statements run on their own plus batches. */
  roundTrips(): number;
  /** The most parameters bound to one statement so far (D1 takes at most 100). */
  mostBound(): number;
}

export function countingD1(): CountingD1 {
  let statements = 0;
  let batches = 0;
  let mostBound = 0;
  const DB = observedD1(env.DB, {
    bound: (params) => { mostBound = Math.max(mostBound, params.length); },
    ran: () => { statements += 1; },
    batched: () => { batches += 1; },
  });
  return { DB, statements: () => statements, roundTrips: () => statements + batches, mostBound: () => mostBound };
}
