// `service attachment list [--cursor] [--limit 1..100]`: GET /v1/attachments, your
// non-deleted attachments newest first, printed as the relay's { items, next_cursor }.
import { pagedListCommand } from "../paged-list.ts";

export const attachmentList = pagedListCommand({
  noun: "attachment",
  verb: "list",
  summary: "your attachments, newest first (a page at a time)",
  path: "/v1/attachments",
  pageParam: "cursor",
  nextField: "next_cursor",
  limit: { max: 100, fallback: 50 },
  examples: ["service attachment list --limit 10"],
});
