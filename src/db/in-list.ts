/**
 * `column IN (the list)` with the whole list bound as one JSON array (SQLite's json_each),
 * for lists whose length the caller does not bound well under 100: D1 and a Durable
 * Object's SQLite take at most 100 bound parameters a statement, where drizzle's `inArray`
 * binds one per element (the local runtime does not enforce the limit, so only production
 * would refuse the statement).
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";

export function inList(column: SQLWrapper, values: readonly string[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

/** The same for hand-written SQL: `IN (…)` over the JSON array bound at `placeholder` (`?`, `?3`). */
export function inJsonList(placeholder: string): string {
  return `IN (SELECT value FROM json_each(${placeholder}))`;
}
