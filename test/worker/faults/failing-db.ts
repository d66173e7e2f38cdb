// Fault injection at the relay's data layer: a D1 binding that is the test environment's
// real one, except that after a given number of statements the next ones (run, all,
// first, raw, a batch: every one, or a few for a blip) throw as a failing database would. The fault tests hand it
// to the Worker's fetch and queue handlers in place of env.DB; nothing of the runtime is
// replaced, only our own calls into the real binding are cut off.
import { env } from "cloudflare:test";

export interface FailingDb {
  /** The binding to pass as `DB`. */
  binding: D1Database;
  /** How many statements (a batch counts as one) reached the real database. */
  passed(): number;
  /** How many were refused. */
  refused(): number;
}

/**
 * Wraps the real env.DB: the first `allowed` statements go through, the next `failures`
 * (all of them by default: an outage) throw, and any after those go through again (a blip).
 */
export function failingDb(allowed: number, failures = Infinity, real: D1Database = env.DB): FailingDb {
  let passed = 0;
  let refused = 0;
  const realOf = new WeakMap<object, D1PreparedStatement>();
  const gate = async <T>(work: () => Promise<T>): Promise<T> => {
    if (passed >= allowed && refused < failures) {
      refused += 1;
      throw new Error("D1_ERROR: injected fault: the database is unavailable");
    }
    passed += 1;
    return work();
  };
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = {
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      first: (column?: string) => gate(() => (column === undefined ? statement.first() : statement.first(column))),
      run: () => gate(() => statement.run()),
      all: () => gate(() => statement.all()),
      raw: (options?: { columnNames?: boolean }) => gate(() => statement.raw(options as { columnNames: true })),
    };
    realOf.set(wrapped, statement);
    return wrapped as unknown as D1PreparedStatement;
  };
  const binding = {
    prepare: (query: string) => wrap(real.prepare(query)),
    batch: (statements: D1PreparedStatement[]) => gate(() => real.batch(statements.map((statement) => realOf.get(statement) ?? statement))),
    exec: (query: string) => gate(() => real.exec(query)),
    dump: () => gate(() => real.dump()),
    withSession: () => binding,
  };
  return { binding: binding as unknown as D1Database, passed: () => passed, refused: () => refused };
}
