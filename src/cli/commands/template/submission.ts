// What the template publishing and review verbs share: the <snapshot-id> argument and
// the path of one submission.
import type { ArgSpec } from "../../argv.ts";

export const SNAPSHOT_ARG: ArgSpec = { name: "snapshot-id", required: true, description: "the snapshot_id a publish answered (tpl_…)" };

export function submissionPath(snapshotId: string, action = ""): string {
  return `/v1/community/submissions/${encodeURIComponent(snapshotId)}${action ? `/${action}` : ""}`;
}
