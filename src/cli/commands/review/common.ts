// What the review verbs share: the <id> argument and the path of one review.
import type { ArgSpec } from "../../argv.ts";

export const REVIEW_ARG: ArgSpec = { name: "id", required: true, description: "the review's id (rev_…)" };

export function reviewPath(id: string, action: string): string {
  return `/v1/reviews/${encodeURIComponent(id)}/${action}`;
}
