// bin/service runs dist/cli/service.mjs, bundled from src/cli/ (and what it imports) by
// scripts/build-cli.mjs; `npm install` builds it and bin/service (like this project's
// global setup) rebuilds it when an input listed at the last build is newer than that
// build. This fails when the bundle on disk is not what a build of today's sources gives,
// i.e. when that check missed a change and the CLI would run stale code.
import { mkdtempSync, rmSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM build script
import { INPUTS, OUTPUT, renderCliBundle, staleReason } from "../../scripts/build-cli.mjs";

describe("the CLI bundle", () => {
  it("matches a fresh build of src/cli (run `npm run build:cli` to refresh)", async () => {
    const { code, inputs } = (await renderCliBundle()) as { code: string; inputs: string[] };
    const onDisk = readFileSync(OUTPUT, "utf8");
    // Not toBe: a diff of two 270 KB strings says nothing useful.
    expect(onDisk === code, `${OUTPUT} differs from a fresh build of src/cli`).toBe(true);
    const listed = JSON.parse(readFileSync(INPUTS, "utf8")) as { inputs: string[] };
    expect(listed.inputs).toEqual([...inputs, "scripts/build-cli.mjs"]);
    expect(staleReason()).toBeNull();
  });

  it("is one ES module with the CLI's sources inside: nothing but Node's built-ins imported at run time", async () => {
    const { code, inputs } = (await renderCliBundle()) as { code: string; inputs: string[] };
    expect(inputs).toContain("src/cli/main.ts");
    const imports = [...code.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((spec) => !spec.startsWith("node:"))).toEqual([]);
    expect(code).toMatch(/^const require = __serviceCreateRequire\(import\.meta\.url\);$/m);
  });

  describe("staleness check (what bin/service does before every run)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "cli-bundle-test-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const at = (name: string) => path.join(dir, name);
    const options = { output: at("service.mjs"), inputsFile: at("service.inputs.json"), base: dir };
    const builtFrom = Date.now() - 60_000;

    it("is satisfied while every input is older than the build, and names the first that is not", () => {
      expect(staleReason(options)).toBe("service.mjs is missing");
      for (const name of ["a.ts", "b.ts", "service.mjs"]) {
        writeFileSync(at(name), name);
        utimesSync(at(name), new Date(builtFrom - 1000), new Date(builtFrom - 1000));
      }
      writeFileSync(options.inputsFile, JSON.stringify({ builtFrom, inputs: ["a.ts", "b.ts"] }));
      expect(staleReason(options)).toBeNull();
      utimesSync(at("b.ts"), new Date(), new Date());
      expect(staleReason(options)).toBe("b.ts changed");
      rmSync(at("a.ts"));
      expect(staleReason(options)).toBe("a.ts is gone");
      writeFileSync(options.inputsFile, "{");
      expect(staleReason(options)).toBe("service.inputs.json is missing or unreadable");
      writeFileSync(options.inputsFile, JSON.stringify({ inputs: [] }));
      expect(staleReason(options)).toBe("service.inputs.json is missing or unreadable");
      rmSync(options.output);
      expect(staleReason(options)).toBe("service.mjs is missing");
    });
  });
});
