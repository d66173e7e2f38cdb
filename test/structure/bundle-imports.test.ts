// Imports that decide the Worker's size and what every isolate of it loads. zod's `z`
// export is a namespace object holding every export (its 40-odd error-message locales
// among them, about 360 KiB), and a bundler must keep all of it once `z` itself is
// imported; `import * as z` lets it keep only what the code uses. One named import
// anywhere brings the whole of it back. The MCP SDK, the OAuth provider and file-type are
// loaded on first use, and a static import anywhere would load them with the Worker again.
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { root, sourceFiles } from "./source-files";
import { describe, expect, it } from "vitest";

function sources(folder: string): string[] {
  return sourceFiles(folder, { file: (name) => /\.(ts|tsx|mts)$/.test(name) });
}

/**
 * The libraries an isolate loads only on first use (src/mcp/endpoint.ts, the file-type
 * signatures in src/blobs/sniff.ts, and the OAuth provider in
 * src/mcp/oauth/authorization-server.ts): one static import anywhere would run them with
 * the Worker again. The entry module that only dynamic imports reach may import
 * them statically.
 */
const LOADED_ON_USE = [/^@modelcontextprotocol\//, /^agents(\/|$)/, /^@cloudflare\/workers-oauth-provider$/, /^file-type(\/|$)/];
const LAZY_ENTRY = "src/mcp/server.ts";

/** The specifiers a file imports statically, values only (`import type` is erased); relative ones resolved against the root. */
function staticImports(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;]*?\sfrom\s+)?["']([^"']+)["']/gms)) {
    const specifier = match[1];
    found.push(specifier.startsWith(".") ? relative(root, resolve(dirname(path), specifier)) : specifier);
  }
  return found;
}

describe("the Worker's imports", () => {
  it("load the MCP SDK, the OAuth provider and file-type on first use, never with the Worker", () => {
    const files = ["src", "durable-objects", "workers"].flatMap(sources);
    const lazyEntry = LAZY_ENTRY.replace(/\.ts$/, "");
    const offenders = files.flatMap((path) => {
      const name = relative(root, path);
      return staticImports(path)
        .filter((specifier) => (name !== LAZY_ENTRY && LOADED_ON_USE.some((pattern) => pattern.test(specifier))) || specifier === lazyEntry)
        .map((specifier) => `${name} imports ${specifier}`);
    });
    expect(offenders).toEqual([]);
    // The check sees imports at all: the lazy entry's own are found.
    expect(staticImports(`${root}/${LAZY_ENTRY}`)).toContain("@modelcontextprotocol/server");
  });

  it("take zod as a namespace (import * as z), never its `z` object", () => {
    const offenders = ["src", "durable-objects", "workers"].flatMap(sources)
      .filter((path) => /import\s+(type\s+)?\{[^}]*\bz\b[^}]*\}\s+from\s+["']zod(\/[^"']*)?["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });
});
