// `service template list-pending [--limit] [--cursor]`: the operator's review queue
// (GET /v1/community/pending), expedited first, then oldest first; prints { items,
// next_cursor }.
import { pagedListCommand } from "../paged-list.ts";

export const templateListPending = pagedListCommand({
  noun: "template",
  verb: "list-pending",
  summary: "submissions waiting for review, expedited first (operators only)",
  path: "/v1/community/pending",
  pageParam: "cursor",
  nextField: "next_cursor",
  limit: { max: 200, fallback: 25 },
  examples: ["service template list-pending --limit 10"],
});
