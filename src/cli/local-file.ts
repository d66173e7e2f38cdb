// The size of a file the CLI is about to send, or null when the path is not a readable
// regular file: shared by the commands that upload one (attachment upload, apps import),
// each of which words its own invalid_args refusal.
import { statSync } from "node:fs";

export function regularFileSize(file: string): number | null {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat.size : null;
  } catch {
    return null;
  }
}
