/**
 * One drizzle handle per D1 binding. drizzle objects are cheap, but keeping one per
 * binding avoids rebuilding the schema map on every query.
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
