// `service feedback list [--limit] [--before <cursor>]`: the feedback you filed, newest
// first (GET /v1/feedback), printed as the relay's { items, next_before? }; pass
// next_before as --before for the next page.
import { pagedListCommand } from "../paged-list.ts";

export const feedbackList = pagedListCommand({
  noun: "feedback",
  verb: "list",
  summary: "the feedback you filed, newest first (a page at a time)",
  path: "/v1/feedback",
  pageParam: "before",
  nextField: "next_before",
  limit: { max: 100, fallback: 50 },
  examples: ["service feedback list --limit 10"],
});
