// The AppStore's boundary (durable-objects/app-store/contract.ts): the rest of the relay
// imports the store only through its contract, so the Worker and the Durable Object cannot
// reach into each other's internals. Only the Worker entry exports the class itself, and
// the store's own tests (beside it, in durable-objects/app-store/test/) may look inside.
// The store, for its part, never reads D1 but through its one named loader and never
// builds an HTTP answer but the socket upgrade's.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const STORE = "durable-objects/app-store/";
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;

function filesUnder(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name.startsWith(".")) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name)) out.push(relative(root, path));
    }
  };
  walk(join(root, folder));
  return out;
}

/** Every module a file imports, re-exports or loads dynamically, resolved to a path from the root (relative specifiers only). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)].map((match) => match[1]);
  return specifiers.filter((spec) => spec.startsWith(".")).map((spec) => relative(root, resolve(root, dirname(file), spec)));
}

const outside = ["src", "workers", "test", "scripts", "bench"].flatMap(filesUnder);
// The AppStore's own files (other objects, such as the task wake object, have their own contract).
const inside = filesUnder(STORE).filter((file) => !file.startsWith(`${STORE}test/`));

describe("the AppStore's boundary", () => {
  it("everything outside durable-objects/ imports the store only through contract.ts (the Worker entry exports the class)", () => {
    const crossings = outside.flatMap((file) => importsOf(file)
      .filter((target) => target.startsWith(STORE) && target.replace(/\.ts$/, "") !== `${STORE}contract`)
      .filter((target) => !(file === "workers/relay.ts" && target.replace(/\.ts$/, "") === `${STORE}app-store`))
      .map((target) => `${file} → ${target}`));
    expect(crossings).toEqual([]);
  });

  it("the check sees imports at all (a file known to import the contract is found)", () => {
    expect(importsOf("src/apps/store.ts").map((target) => target.replace(/\.ts$/, ""))).toContain(`${STORE}contract`);
  });

  it("the store reads D1 only through its manifest loader and knows no HTTP routing", () => {
    const d1 = inside.filter((file) => /\bDB\.prepare|\.prepare\(/.test(readFileSync(join(root, file), "utf8")) && file !== `${STORE}manifests.ts`);
    expect(d1).toEqual([]);
    const http = inside.flatMap((file) => importsOf(file).filter((target) => target.startsWith("src/http/")).map((target) => `${file} → ${target}`));
    expect(http).toEqual([]);
  });

  it("the store builds no HTTP answer but the socket upgrade's (app-store.ts) and the upgrade refusal (contract.ts)", () => {
    const builders = inside.filter((file) => /new Response\(|Response\.json\(/.test(readFileSync(join(root, file), "utf8")));
    expect(builders.sort()).toEqual([`${STORE}app-store.ts`, `${STORE}contract.ts`]);
  });
});
