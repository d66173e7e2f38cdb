// Imports that decide the Worker's size. zod's `z` export is a namespace object holding
// every export (its 40-odd error-message locales among them, about 360 KiB), and a bundler
// must keep all of it once `z` itself is imported; `import * as z` lets it keep only what
// the code uses. One named import anywhere brings the whole of it back.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { root, sourceFiles } from "./source-files";
import { describe, expect, it } from "vitest";

function sources(folder: string): string[] {
  return sourceFiles(folder, { file: (name) => /\.(ts|tsx|mts)$/.test(name) });
}

describe("the Worker's imports", () => {
  it("take zod as a namespace (import * as z), never its `z` object", () => {
    const offenders = ["src", "durable-objects", "workers"].flatMap(sources)
      .filter((path) => /import\s+(type\s+)?\{[^}]*\bz\b[^}]*\}\s+from\s+["']zod(\/[^"']*)?["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });
});
