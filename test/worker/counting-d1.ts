// The real D1 binding wrapped to count its round trips: each statement run on its own
// (all, raw, first, run) and each batch is one trip to the database. Tests use it to show
// that a path reads nothing (a reused lookup) or how many trips it makes (a claim, an ack),
// and how many parameters its statements bind.
import { env } from "cloudflare:test";

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
  const RUNNERS = new Set<PropertyKey>(["all", "raw", "first", "run"]);
  /** A batch hands the statements to the real binding unwrapped, so they count once, as the batch. */
  const unwrapped = new WeakMap<D1PreparedStatement, D1PreparedStatement>();
  function counted(statement: D1PreparedStatement): D1PreparedStatement {
    const proxy = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        if (property === "bind") {
          return (...args: unknown[]) => {
            mostBound = Math.max(mostBound, args.length);
            return counted(method.apply(target, args) as D1PreparedStatement);
          };
        }
        if (RUNNERS.has(property)) return (...args: unknown[]) => { statements += 1; return method.apply(target, args); };
        return method.bind(target);
      },
    });
    unwrapped.set(proxy, statement);
    return proxy;
  }
  const DB = new Proxy(env.DB, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (property === "prepare") return (query: string) => counted(method.call(target, query) as D1PreparedStatement);
      if (property === "batch") {
        return (list: D1PreparedStatement[]) => { batches += 1; return method.call(target, list.map((item) => unwrapped.get(item) ?? item)); };
      }
      return method.bind(target);
    },
  });
  return { DB, statements: () => statements, roundTrips: () => statements + batches, mostBound: () => mostBound };
}
