/**
 * A D1 binding whose use can be watched: each statement prepared, each parameter list
 * bound, each statement run on its own and each batch are reported to an observer, and the
 * real binding does the work. Development mode holds statements to Cloudflare's limits
 * through it (production-limits.ts); tests count round trips with it. Batches are handed
 * the binding's own statements, never the watched wrappers, so the runtime sees what it made.
 */
export interface D1Observer {
  /** `query` prepared; may throw to refuse it. */
  prepared?(query: string): void;
  /** `params` bound to `query`; may throw to refuse the statement. */
  bound?(params: unknown[], query: string): void;
  /** A statement run on its own (all, raw, first, run). */
  ran?(): void;
  /** A batch of statements, one trip. */
  batched?(): void;
}

const RUNNERS = new Set<PropertyKey>(["all", "raw", "first", "run"]);

export function observedD1(database: D1Database, observer: D1Observer): D1Database {
  const realStatements = new WeakMap<D1PreparedStatement, D1PreparedStatement>();
  const watched = (statement: D1PreparedStatement, query: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        if (property === "bind") {
          return (...params: unknown[]) => {
            observer.bound?.(params, query);
            return watched(method.apply(target, params) as D1PreparedStatement, query);
          };
        }
        if (RUNNERS.has(property)) return (...args: unknown[]) => { observer.ran?.(); return method.apply(target, args); };
        return method.bind(target);
      },
    });
    realStatements.set(proxy, statement);
    return proxy;
  };
  return new Proxy(database, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (property === "prepare") {
        return (query: string) => {
          observer.prepared?.(query);
          return watched(method.call(target, query) as D1PreparedStatement, query);
        };
      }
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          observer.batched?.();
          return method.call(target, statements.map((statement) => realStatements.get(statement) ?? statement));
        };
      }
      return method.bind(target);
    },
  });
}
