// Imports that decide the Worker's size. zod's `z` export is a namespace object holding
// every export (its 40-odd error-message locales among them, about 360 KiB), and a bundler
// must keep all of it once `z` itself is imported; `import * as z` lets it keep only what
// the code uses. One named import anywhere brings the whole of it back.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function sources(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|tsx|mts)$/.test(name)) out.push(path);
    }
  };
  walk(join(root, folder));
  return out;
}

describe("the Worker's imports", () => {
  it("take zod as a namespace (import * as z), never its `z` object", () => {
    const offenders = ["src", "durable-objects", "workers"].flatMap(sources)
      .filter((path) => /import\s+(type\s+)?\{[^}]*\bz\b[^}]*\}\s+from\s+["']zod(\/[^"']*)?["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });
});
