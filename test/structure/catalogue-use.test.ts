// Every code of the error catalogue is either answered by some code path or listed in
// AWAITING_FEATURE with the feature that will answer it, so the catalogue holds no dead
// entries and the list of what is still to come stays true as features land.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { root, sourceFiles } from "./source-files";
import { describe, expect, it } from "vitest";
import { AWAITING_FEATURE, catalogue, type ErrorCode } from "../../src/errors";

function sources(folder: string): string[] {
  return sourceFiles(folder, { file: (name) => /\.(ts|tsx)$/.test(name) && !name.endsWith(".test.ts"), folder: (name) => name !== "test" && name !== "cli" });
}

// The relay's own code (the CLI prints codes it receives, so it does not count), less the catalogue itself.
const code = ["src", "durable-objects", "workers"].flatMap(sources).filter((path) => relative(root, path) !== "src/errors.ts")
  .map((path) => readFileSync(path, "utf8")).join("\n");
const used = (name: string) => code.includes(`"${name}"`);

describe("the error catalogue", () => {
  it("answers every code it lists, but those awaiting a feature", () => {
    const dead = (Object.keys(catalogue) as ErrorCode[]).filter((name) => !used(name) && !(name in AWAITING_FEATURE));
    expect(dead).toEqual([]);
  });

  it("lists as awaiting only codes nothing answers yet", () => {
    const answered = Object.keys(AWAITING_FEATURE).filter(used);
    expect(answered).toEqual([]);
  });
});
