// What the structure tests read: the repository's root, and the files under a folder of it
// that a test's filters keep (each test has its own idea of which sources count).
import { readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface SourceFilter {
  /** Whether a file (by name) is kept. */
  file: (name: string) => boolean;
  /** Whether a folder (by name) is walked into; every one unless said. */
  folder?: (name: string) => boolean;
}

/** Absolute paths of the files under `folder` (relative to the root) that `filter` keeps. */
export function sourceFiles(folder: string, filter: SourceFilter): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (filter.folder?.(name) ?? true) walk(path);
      } else if (filter.file(name)) out.push(path);
    }
  };
  walk(join(root, folder));
  return out;
}
