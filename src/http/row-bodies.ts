/**
 * The request shapes of a collection's rows, shared by both doors that write them: the
 * agent API (`/v1/apps/:id/collections/:name`, v1/rows.ts) and an app page's own origin
 * (`/_svc/c/<collection>`, serve/data.ts). One set of schemas, so the two doors accept and
 * refuse exactly the same bodies and queries (WIRE §2.3, §4.3).
 */
import * as z from "zod";

/** The version a writer read; a mismatch is 409 conflict. */
export const ifMatch = z.number().int().min(0);
/** `on`: the declared unique field a create upserts by. */
export const onField = z.string().max(64);

/** A row as a create writes it: each batch row, and (with `on`) the single-row create. */
export const rowWrite = z.strictObject({ data: z.unknown(), key: z.string().max(128).optional() });
export const rowCreate = rowWrite.extend({ on: onField.optional() });
export const rowUpdate = z.strictObject({ data: z.unknown(), if_match: ifMatch.optional() });
export const rowDelete = z.strictObject({ if_match: ifMatch.optional() });

/** A list page's query: `since` = the previous page's next_cursor, `q` = URL-encoded JSON `{ where?, sort? }`. */
export const rowListQuery = z.object({
  since: z.string().max(2000).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  q: z.string().max(8000).optional(),
});
