// `service data <app> <collection> import` with large rows, as a real process against the
// real test relay: chunks are cut by size as well as by count (each request under the
// CLI's byte budget, a row larger than the budget alone), so an import far larger than
// 1 MiB writes every row, and a bad row anywhere — too deep, too large, not JSON — is a
// failure in the summary while the rows around it are written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planChunks, REQUEST_BYTE_BUDGET } from "../../src/cli/commands/data/import.ts";
import { cleanupTempHomes, appPackage, writeTempFile, claimedCliAgent, ok, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;
type Failure = { index: number; key?: string; error: { code: string; status?: number; details?: Obj } };
type Summary = { app: string; collection: string; total: number; imported: number; failed: number; chunks: number; silent: boolean; failures: Failure[] };

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"], countRead: ["owner"] };

function manifest(): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": { app: { name: "Import size" }, collections: { big: owned, mixed: owned, keyed: owned } },
  };
}


/** Row data of about `bytes` bytes of JSON. */
const row = (i: number, bytes = 60_000) => ({ i, pad: "x".repeat(bytes) });

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

afterAll(() => {
  cleanupTempHomes();
});

describe("planChunks", () => {
  const size = (n: number) => n;

  it("cuts by count and by bytes; a row over the budget goes alone", () => {
    expect(planChunks([1, 1, 1, 1, 1], 2, 1000, 10, size)).toEqual([[1, 1], [1, 1], [1]]);
    // envelope 10 + (300 + 1) × 3 = 913 fits 1000; a fourth does not.
    expect(planChunks([300, 300, 300, 300], 100, 1000, 10, size)).toEqual([[300, 300, 300], [300]]);
    expect(planChunks([100, 5000, 100, 100], 100, 1000, 10, size)).toEqual([[100], [5000], [100, 100]]);
    expect(planChunks([], 100, 1000, 10, size)).toEqual([]);
    expect(REQUEST_BYTE_BUDGET).toBeLessThan(1_048_576);
  });
});

describe("import by size", () => {
  let me: CliAgent;
  const slug = `import-size-${Math.random().toString(36).slice(2, 8)}`;
  const data = (collection: string, args: string[]) => me.cli(["data", slug, collection, ...args], { timeoutMs: 120_000 });
  const count = async (collection: string) => ok(await data(collection, ["count"])).json<{ count: number }>().count;

  beforeAll(async () => {
    me = await claimedCliAgent("cli-import-size-test");
    const dir = appPackage(manifest(), "import");
    ok(await me.cli(["deploy", dir, "--slug", slug]));
  });

  it("imports rows totalling far more than 1 MiB: every row written, in chunks that each fit the budget", async () => {
    const rows = Array.from({ length: 150 }, (_, i) => row(i));
    const file = writeTempFile("big.ndjson", rows.map((r) => JSON.stringify(r)).join("\n"));
    const summary = ok(await data("big", ["import", "--file", file])).json<Summary>();
    // 16 rows of about 60 KB fit in 1 MB; a 17th does not: 150 rows are 10 requests.
    expect(summary).toMatchObject({ collection: "big", total: 150, imported: 150, failed: 0, chunks: 10, silent: true, failures: [] });
    expect(await count("big")).toBe(150);
    // With keys, as a JSON array from stdin; --chunk still caps the count.
    const keyed = rows.slice(0, 40).map((r) => ({ ...r, id: `row-${r.i}` }));
    const withKeys = ok(await me.cli(["data", slug, "keyed", "import", "--file", "-", "--key-field", "id", "--chunk", "10"], { stdin: JSON.stringify(keyed), timeoutMs: 120_000 })).json<Summary>();
    expect(withKeys).toMatchObject({ total: 40, imported: 40, failed: 0, chunks: 4 });
    const got = ok(await data("keyed", ["get", "row-39"])).json<{ row: { data: Obj } }>();
    expect(got.row.data).toEqual(keyed[39]);
  });

  it("a bad row in the middle is listed in the summary; the rest are written", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify(row(i)));
    lines[5] = JSON.stringify({ i: 5, deep: nested(150) });
    lines[10] = JSON.stringify(row(10, 70_000));
    lines[25] = JSON.stringify(row(25, 1_500_000));
    lines[30] = "{ not json";
    const file = writeTempFile("mixed.ndjson", `${lines.join("\n")}\n`);
    const summary = ok(await data("mixed", ["import", "--file", file])).json<Summary>();
    expect(summary).toMatchObject({ collection: "mixed", total: 40, imported: 36, failed: 4 });
    expect(summary.failures.map((f) => [f.index, f.error.code, f.error.status])).toEqual([
      [5, "invalid_request", 400],
      [10, "row_size_exceeded", 413],
      [25, "row_size_exceeded", 413],
      [30, "invalid_json", undefined],
    ]);
    expect(summary.failures[0].error.details).toMatchObject({ limit: 100 });
    // 0–4 and 6–9 … : the row over the budget went alone, so there are more chunks than 2.
    expect(summary.chunks).toBeGreaterThanOrEqual(4);
    expect(await count("mixed")).toBe(36);
    const listed = ok(await data("mixed", ["list", "--all", "--limit", "100"])).json<{ rows: Array<{ data: { i: number } }> }>();
    expect(listed.rows.map((r) => r.data.i).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => ![5, 10, 25, 30].includes(i)));
  });
});
