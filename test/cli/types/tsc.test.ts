// The generated declaration file compiles under `tsc --strict` together with page code that
// uses it, and the same compiler rejects page code that misuses a typed field.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { typesDeclaration } from "../../../src/types-gen";
import { typesManifest } from "../../unit/types-gen/fixture";

const run = promisify(execFile);
const TSC = resolve("node_modules/typescript/bin/tsc");

const GOOD_USE = `import type { Todos, Row } from "./types";
const todos: Row<Todos>[] = service.collections.snapshot("todos");
const titles: string[] = todos.map((row) => row.data.title);
const open = todos.filter((row) => row.data.status === "open" && row.data.estimate !== null);
const first = window.service.collections.get("people", "k1");
const name: string | undefined = first?.data.name;
const scores = service.collections.snapshot("row").map((row) => row.data["math"]);
const total: number = scores.reduce<number>((sum, score) => sum + (score ?? 0), 0);
async function add(): Promise<string> {
  const created = await service.collections.create("todo-items", { name: "Ada" });
  await service.collections.update("todos", "k2", { title: "Write", status: "done", tags: ["a"], shape: { radius: 2 } });
  const stop = service.collections.on("todos", (event) => { if (event.kind === "upsert") void event.row.data.title; });
  stop();
  return created.data.name;
}
export { titles, open, name, total, add };
`;

const WRONG_USES: Record<string, string> = {
  "a number into a string field": `service.collections.create("todos", { title: 3, status: "open" });`,
  "a value outside an enum": `service.collections.create("todos", { title: "x", status: "later" });`,
  "a field a closed object does not declare": `service.collections.create("todos", { title: "x", status: "open", color: "red" });`,
  "an undeclared collection": `service.collections.snapshot("nope");`,
  "a string read as a number": `const n: number = service.collections.snapshot("todos")[0]!.data.title; void n;`,
};

async function tsc(dir: string, useSource: string): Promise<{ ok: boolean; output: string }> {
  await writeFile(join(dir, "use.ts"), useSource.startsWith("import") ? useSource : `export {};\n${useSource}\n`);
  const args = [TSC, "--strict", "--noEmit", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler", "--lib", "es2022,dom", join(dir, "types.d.ts"), join(dir, "use.ts")];
  try {
    const { stdout } = await run(process.execPath, args, { timeout: 120_000 });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

describe("generated types under tsc --strict", { timeout: 240_000 }, () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "types-gen-"));
    await writeFile(join(dir, "types.d.ts"), typesDeclaration(typesManifest(), "Typed app v1"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("compiles the file with page code that uses it", async () => {
    const result = await tsc(dir, GOOD_USE);
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  });

  it.each(Object.entries(WRONG_USES))("rejects %s", async (_label, source) => {
    const result = await tsc(dir, source);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/use\.ts\(\d+,\d+\): error TS/);
  });
});
