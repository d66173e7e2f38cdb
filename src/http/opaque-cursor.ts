/**
 * Opaque list cursors: the sort values of the last item of a page, as base64 of a JSON
 * array. A cursor the relay did not issue (not base64, not JSON, wrong shape) is refused
 * with `invalid_request` on `cursor`, never a 500.
 */
import { RelayError } from "../errors";

export function encodeOpaqueCursor(values: (string | number)[]): string {
  return btoa(JSON.stringify(values)).replace(/=+$/, "");
}

/** The values a cursor carries, when they are `kinds` in order ("string" or "number"). */
export function decodeOpaqueCursor(cursor: string, kinds: ("string" | "number")[]): (string | number)[] {
  try {
    const values = JSON.parse(atob(cursor)) as unknown;
    if (Array.isArray(values) && values.length === kinds.length && values.every((value, index) => typeof value === kinds[index])) {
      return values as (string | number)[];
    }
  } catch { /* fall through */ }
  throw new RelayError("invalid_request", "This cursor was not issued by the relay.", { field: "cursor" });
}
