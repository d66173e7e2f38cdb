/**
 * One drizzle handle per D1 binding. drizzle objects are cheap, but keeping one per
 * binding avoids rebuilding the schema map on every query. The lookups on nearly every
 * request's path (an agent key, a session, an app by its slug) go further and keep their
 * queries prepared (preparedPerBinding).
 */
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = DrizzleD1Database<typeof schema>;

const handles = new WeakMap<D1Database, Db>();

export function db(env: { DB: D1Database }): Db {
  let handle = handles.get(env.DB);
  if (!handle) {
    handle = drizzle(env.DB, { schema });
    handles.set(env.DB, handle);
  }
  return handle;
}

/**
 * Queries built once per D1 binding, with placeholders for what changes per call, for the
 * lookups on nearly every request's path: building a drizzle query (its joins, conditions
 * and selection) costs more CPU than reading the one row it finds.
 */
export function preparedPerBinding<Queries>(build: (d: Db) => Queries): (env: { DB: D1Database }) => Queries {
  const built = new WeakMap<D1Database, Queries>();
  return (env) => {
    let queries = built.get(env.DB);
    if (!queries) {
      queries = build(db(env));
      built.set(env.DB, queries);
    }
    return queries;
  };
}
