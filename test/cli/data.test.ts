// `service data <app> <collection> <verb>` as a real process against the real test relay,
// on an app whose `items` collection has a schema, a unique field and countRead: the row
// round trip (upsert in its three forms, get, update with --if-match, delete, deleted,
// restore, purge with its --yes refusal), list with where/sort/paging/--all, count, import
// of NDJSON and of a JSON array with bad rows (summary counts and failures), --key-field
// create-or-skip on a re-import, retention flags, and the relay's errors passed through
// with exit 1.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, appPackage, tempDir, writeTempFile, cliPath, relayUrl, type RunOptions, claimedCliAgent, failed, ok, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;
type Row = { key: string; data: Obj; version: number; deleted_at: string | null };

const ITEM = {
  type: "object",
  properties: { name: { type: "string", maxLength: 60 }, n: { type: "number" }, id: { type: ["string", "number"] }, tag: { type: "string" } },
  required: ["name"],
};

function manifest(): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Item: ITEM },
    "x-service-manifest": {
      app: { name: "Data" },
      collections: {
        items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"], countRead: ["owner"], unique: ["name"] },
        plain: { read: ["owner"], write: ["owner"], delete: ["owner"] },
        bulk: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"], countRead: ["owner"], unique: ["name"] },
        kept: { read: ["owner"], write: ["owner"], delete: ["owner"], retention: { maxRows: 500 } },
      },
    },
  };
}


const shellQuote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`;

/**
 * Runs `command` on a pseudo-terminal with `script`: util-linux's on Linux (bsdutils, on
 * every Debian), the BSD one on macOS. Without it the test fails and says what to install.
 */
function inTerminal(command: string[], env: NodeJS.ProcessEnv) {
  const args = process.platform === "darwin" ? ["-q", "/dev/null", ...command] : ["-qec", command.map(shellQuote).join(" "), "/dev/null"];
  const run = spawnSync("script", args, { env, encoding: "utf8", timeout: 30_000 });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new Error("This test needs `script` to give the CLI a terminal: install util-linux's bsdutils (Debian: apt-get install bsdutils).");
  }
  return run;
}

afterAll(() => {
  cleanupTempHomes();
});

describe("data verbs", () => {
  let me: CliAgent;
  let appId: string;
  const slug = `data-${Math.random().toString(36).slice(2, 8)}`;
  /** `service data <slug> <collection> ...` */
  const data = (collection: string, args: string[], options?: RunOptions) => me.cli(["data", slug, collection, ...args], options);

  beforeAll(async () => {
    me = await claimedCliAgent("cli-data-test");
    const dir = appPackage(manifest(), "data");
    appId = ok(await me.cli(["deploy", dir, "--slug", slug])).json<{ app_id: string }>().app_id;
  });

  it("upserts in its three forms and passes the relay's refusals through", async () => {
    const minted = ok(await data("items", ["upsert", "--data", '{"name":"alpha","n":1}'])).json<{ row: Row; deduped?: true }>();
    expect(minted.row).toMatchObject({ data: { name: "alpha", n: 1 }, version: 1, deleted_at: null });
    expect(minted.row.key).toEqual(expect.any(String));
    expect(minted.deduped).toBeUndefined();

    const file = writeTempFile("beta.json", JSON.stringify({ name: "beta", n: 2 }));
    const atKey = ok(await data("items", ["upsert", "--key", "b1", "--data", `@${file}`])).json<{ row: Row; deduped?: true }>();
    expect(atKey.row).toMatchObject({ key: "b1", data: { name: "beta", n: 2 }, version: 1 });
    // A plain path works too; the same key again returns the existing row, deduped.
    const again = ok(await data("items", ["upsert", "--key", "b1", "--data", file])).json<{ row: Row; deduped?: true }>();
    expect(again).toEqual({ row: atKey.row, deduped: true });

    // --on a unique field updates the matching row in place.
    const onName = ok(await data("items", ["upsert", "--on", "name", "--data", '{"name":"ALPHA ","n":10}'])).json<{ row: Row }>();
    expect(onName.row).toMatchObject({ key: minted.row.key, version: 2, data: { name: "ALPHA ", n: 10 } });

    // stdin
    const piped = ok(await data("items", ["upsert", "--key", "g1", "--data", "-"], { stdin: '{"name":"gamma"}\n' })).json<{ row: Row }>();
    expect(piped.row).toMatchObject({ key: "g1", data: { name: "gamma" } });

    const schema = failed(await data("items", ["upsert", "--data", '{"n":3}']), "row_schema_violation");
    expect(schema.details).toMatchObject({ collection: "items", errors: [expect.objectContaining({ path: "/name" })] });
    expect(schema.docs_url).toContain("row_schema_violation");
    failed(await data("items", ["upsert", "--data", '{"name":"Beta"}']), "unique_conflict");

    failed(await data("items", ["upsert", "--key", "x", "--on", "name", "--data", "{}"]), "invalid_args");
    failed(await data("items", ["upsert"]), "invalid_args");
    failed(await data("items", ["upsert", "--data", "{not json"]), "invalid_args");
    failed(await data("items", ["upsert", "--data", "no-such-file.json"]), "invalid_args");
    failed(await data("items", ["upsert", "--data", "{}", "--if-match", "1"]), "invalid_args");
  });

  it("gets, updates with --if-match, deletes, lists the deleted, restores and purges", async () => {
    ok(await data("items", ["upsert", "--key", "r1", "--data", '{"name":"round"}']));
    const got = ok(await data("items", ["get", "r1"])).json<{ row: Row }>();
    expect(got.row).toMatchObject({ key: "r1", version: 1, data: { name: "round" } });
    failed(await data("items", ["get", "nope"]), "row_not_found");
    failed(await data("items", ["get"]), "invalid_args");
    failed(await data("items", ["get", "r1", "--data", "{}"]), "invalid_args");

    const updated = ok(await data("items", ["update", "r1", "--data", '{"name":"round","n":2}', "--if-match", "1"])).json<{ row: Row }>();
    expect(updated.row).toMatchObject({ version: 2, data: { name: "round", n: 2 } });
    const conflict = failed(await data("items", ["update", "r1", "--data", '{"name":"round","n":3}', "--if-match", "1"]), "conflict");
    expect(conflict.details).toMatchObject({ current: { key: "r1", version: 2 } });
    failed(await data("items", ["update", "r1", "--data", '{"name":"round"}', "--if-match", "x"]), "invalid_args");
    failed(await data("items", ["update", "r1"]), "invalid_args");

    failed(await data("items", ["delete", "r1", "--if-match", "1"]), "conflict");
    expect(ok(await data("items", ["delete", "r1", "--if-match", "2"])).json()).toEqual({ deleted: true, key: "r1" });
    failed(await data("items", ["get", "r1"]), "row_not_found");

    ok(await data("items", ["upsert", "--key", "r2", "--data", '{"name":"second"}']));
    // --yes is accepted; the delete proceeds with or without it.
    expect(ok(await data("items", ["delete", "r2", "--yes"])).json()).toEqual({ deleted: true, key: "r2" });

    const deleted = ok(await data("items", ["deleted"])).json<{ rows: Array<{ key: string; recoverable_until: string }>; next_before: string | null }>();
    expect(deleted.rows.map((r) => r.key).slice(0, 2)).toEqual(["r2", "r1"]);
    const first = ok(await data("items", ["deleted", "--limit", "1"])).json<{ rows: Array<{ key: string }>; next_before: string | null }>();
    expect(first.rows.map((r) => r.key)).toEqual(["r2"]);
    expect(first.next_before).toEqual(expect.any(String));
    const second = ok(await data("items", ["deleted", "--limit", "1", "--before", first.next_before!])).json<{ rows: Array<{ key: string }> }>();
    expect(second.rows.map((r) => r.key)).toEqual(["r1"]);
    failed(await data("items", ["deleted", "--limit", "0"]), "invalid_args");

    const restored = ok(await data("items", ["restore", "r1"])).json<{ row: Row }>();
    expect(restored.row).toMatchObject({ key: "r1", version: 3, data: { name: "round", n: 2 }, deleted_at: null });
    // spec C's form: --key
    expect(ok(await data("items", ["restore", "--key", "r2"])).json<{ row: Row }>().row.key).toBe("r2");
    failed(await data("items", ["restore", "r2", "--key", "r2"]), "invalid_args");
    failed(await data("items", ["restore"]), "invalid_args");

    // purge refuses without --yes and changes nothing.
    const refused = failed(await data("items", ["purge", "r1"]), "confirmation_required");
    expect(refused.message).toContain("--yes");
    ok(await data("items", ["get", "r1"]));
    expect(ok(await data("items", ["purge", "r1", "--yes"])).json()).toEqual({ purged: true, key: "r1" });
    expect(ok(await data("items", ["purge", "--key", "r2", "--yes"])).json()).toEqual({ purged: true, key: "r2" });
    failed(await data("items", ["get", "r1"]), "row_not_found");
    failed(await data("items", ["restore", "r1"]), "restore_expired");
    failed(await data("items", ["purge", "r1", "--yes"]), "row_not_found");
  });

  it("lists with --where, --sort, --limit/--since paging and --all; counts", async () => {
    for (let i = 1; i <= 5; i++) ok(await data("plain", ["upsert", "--key", `p${i}`, "--data", JSON.stringify({ i, odd: i % 2 === 1 })]));

    const all = ok(await data("plain", ["list"])).json<{ rows: Row[]; next_cursor: string | null; has_more: boolean }>();
    expect(all.rows.map((r) => r.key).sort()).toEqual(["p1", "p2", "p3", "p4", "p5"]);
    expect(all.has_more).toBe(false);

    const odd = ok(await data("plain", ["list", "--where", '[{"field":"odd","op":"eq","value":true}]', "--sort", '[{"field":"i","dir":"desc"}]'])).json<{ rows: Row[] }>();
    expect(odd.rows.map((r) => r.key)).toEqual(["p5", "p3", "p1"]);
    // A single condition or sort object is accepted as a one-element list.
    const single = ok(await data("plain", ["list", "--where", '{"field":"i","op":"gte","value":4}', "--sort", '{"field":"i"}'])).json<{ rows: Row[] }>();
    expect(single.rows.map((r) => r.key)).toEqual(["p4", "p5"]);

    const sort = '[{"field":"i","dir":"asc"}]';
    const page1 = ok(await data("plain", ["list", "--limit", "2", "--sort", sort])).json<{ rows: Row[]; next_cursor: string; has_more: boolean }>();
    expect(page1.rows.map((r) => r.key)).toEqual(["p1", "p2"]);
    expect(page1.has_more).toBe(true);
    const page2 = ok(await data("plain", ["list", "--limit", "2", "--sort", sort, "--since", page1.next_cursor])).json<{ rows: Row[] }>();
    expect(page2.rows.map((r) => r.key)).toEqual(["p3", "p4"]);

    const everything = ok(await data("plain", ["list", "--limit", "2", "--sort", sort, "--all"])).json<{ rows: Row[]; next_cursor: null; has_more: boolean }>();
    expect(everything.rows.map((r) => r.key)).toEqual(["p1", "p2", "p3", "p4", "p5"]);
    expect(everything).toMatchObject({ next_cursor: null, has_more: false });

    failed(await data("plain", ["list", "--where", "{oops"]), "invalid_args");
    failed(await data("plain", ["list", "--where", "42"]), "invalid_args");
    failed(await data("plain", ["list", "--limit", "1001"]), "invalid_args");
    // The relay judges the condition itself.
    failed(await data("plain", ["list", "--where", '[{"field":"i","op":"like","value":1}]']), "invalid_request");

    expect(ok(await data("items", ["count"])).json()).toEqual({ count: expect.any(Number) });
    failed(await data("plain", ["count"]), "collection_count_forbidden");
    failed(await data("plain", ["count", "extra"]), "invalid_args");
  });

  it("imports NDJSON with bad rows, lists each failure, and is silent by default", async () => {
    const ndjson = [
      JSON.stringify({ name: "n1", id: "a" }),
      "this is not json",
      JSON.stringify({ n: 7, id: "b" }),
      "",
      JSON.stringify({ name: "n1", id: "c" }),
      JSON.stringify({ name: "n4", id: "d" }),
    ].join("\n");
    const file = writeTempFile("rows.ndjson", `${ndjson}\n`);
    const run = ok(await data("bulk", ["import", "--file", file, "--chunk", "2"]));
    expect(run.stderr).toBe(""); // no progress: stderr is not a terminal
    const summary = run.json<{ failures: Array<{ index: number; key?: string; error: { code: string; status?: number } }> } & Obj>();
    expect(summary).toMatchObject({ app: appId, collection: "bulk", total: 5, imported: 2, failed: 3, chunks: 2, silent: true });
    expect(summary.failures.map((f) => [f.index, f.error.code])).toEqual([
      [1, "invalid_json"],
      [2, "row_schema_violation"],
      [3, "unique_conflict"],
    ]);
    expect(summary.failures[1].error.status).toBe(422);
    expect(summary.failures[2].error.status).toBe(409);
    expect(ok(await data("bulk", ["count"])).json()).toEqual({ count: 2 });
  });

  it("imports a JSON array from stdin with --emit-effects; --key-field makes a re-import create-or-skip", async () => {
    const rows = [{ name: "k-one", id: "one" }, { name: "k-two", id: "two" }, { name: 5, id: "three" }, { name: "k-four" }, { name: "k-five", id: 55 }];
    const first = ok(await data("items", ["import", "--file", "-", "--key-field", "id", "--emit-effects"], { stdin: JSON.stringify(rows) }))
      .json<{ failures: Array<{ index: number; key?: string; error: { code: string } }> } & Obj>();
    expect(first, JSON.stringify(first.failures)).toMatchObject({ collection: "items", total: 5, imported: 3, failed: 2, chunks: 1, silent: false });
    expect(first.failures).toEqual([
      { index: 2, key: "three", error: expect.objectContaining({ code: "row_schema_violation" }) },
      { index: 3, error: expect.objectContaining({ code: "key_field_missing" }) },
    ]);
    const one = ok(await data("items", ["get", "one"])).json<{ row: Row }>();
    expect(one.row).toMatchObject({ key: "one", version: 1, data: { name: "k-one", id: "one" } });
    expect(ok(await data("items", ["get", "55"])).json<{ row: Row }>().row.key).toBe("55");
    const before = ok(await data("items", ["count"])).json<{ count: number }>().count;

    // The same file again, with changed data: existing keys are skipped, unchanged.
    const changed = rows.map((r) => ({ ...r, tag: "second pass" }));
    const file = writeTempFile("again.json", JSON.stringify(changed));
    const second = ok(await data("items", ["import", "--file", file, "--key-field", "id"])).json<Obj>();
    expect(second).toMatchObject({ total: 5, imported: 3, failed: 2, silent: true });
    expect(ok(await data("items", ["count"])).json()).toEqual({ count: before });
    expect(ok(await data("items", ["get", "one"])).json<{ row: Row }>().row).toMatchObject({ version: 1, data: { name: "k-one", id: "one" } });

    failed(await data("items", ["import", "--file", file, "--chunk", "101"]), "invalid_args");
    failed(await data("items", ["import", "--file", file, "--key-field", "id", "--on", "name"]), "invalid_args");
    failed(await data("items", ["import"]), "invalid_args");
    failed(await data("items", ["import", "--file", writeTempFile("broken.json", "[{\"name\":1},")]), "invalid_args");
    failed(await data("items", ["import", "--file", path.join(tempDir(), "missing.ndjson")]), "invalid_args");
  });

  it("prints import progress on stderr only when stderr is a terminal", async () => {
    const file = writeTempFile("tty.ndjson", [1, 2, 3].map((i) => JSON.stringify({ name: `tty-${i}` })).join("\n"));
    const args = ["data", slug, "bulk", "import", "--file", file, "--chunk", "2"];
    const tty = inTerminal([cliPath, ...args], { PATH: process.env.PATH ?? "", HOME: me.home, XDG_CONFIG_HOME: me.home, SERVICE_URL: relayUrl(), SERVICE_API_KEY: me.key });
    expect(tty.status, tty.stdout + tty.stderr).toBe(0);
    expect(tty.stdout).toMatch(/import: chunk 1\/2, 2 of 3 rows sent \(2 imported, 0 failed so far\)/);
    expect(tty.stdout).toMatch(/import: chunk 2\/2, 3 of 3 rows sent \(3 imported, 0 failed so far\)/);
    // The same import without a terminal: the summary only, nothing on stderr.
    const piped = ok(await data("bulk", ["import", "--file", file, "--chunk", "2", "--key-field", "name"]));
    expect(piped.stderr).toBe("");
  });

  it("imports with --on as an upsert by the unique field", async () => {
    const file = writeTempFile("on.ndjson", [{ name: "on-a", n: 1 }, { name: "on-b", n: 1 }].map((r) => JSON.stringify(r)).join("\n"));
    ok(await data("items", ["import", "--file", file, "--on", "name"]));
    const update = writeTempFile("on2.ndjson", JSON.stringify({ name: "on-a", n: 2 }));
    expect(ok(await data("items", ["import", "--file", update, "--on", "name"])).json()).toMatchObject({ total: 1, imported: 1, failed: 0 });
    const listed = ok(await data("items", ["list", "--where", '[{"field":"name","op":"eq","value":"on-a"}]'])).json<{ rows: Row[] }>();
    expect(listed.rows).toHaveLength(1);
    expect(listed.rows[0]).toMatchObject({ version: 2, data: { name: "on-a", n: 2 } });
  });

  it("shows, sets and clears the retention override", async () => {
    const shown = ok(await data("kept", ["retention"])).json<Obj>();
    expect(shown).toEqual({
      effective: { maxRows: 500, maxAgeDays: null }, authorDefault: { maxRows: 500, maxAgeDays: null },
      override: { maxRows: null, maxAgeDays: null }, wouldPrune: 0,
    });
    expect(ok(await data("kept", ["retention", "--show"])).json()).toEqual(shown);

    const set = ok(await data("kept", ["retention", "--max-rows", "20", "--max-age-days", "7"])).json<Obj>();
    expect(set).toMatchObject({ effective: { maxRows: 20, maxAgeDays: 7 }, override: { maxRows: 20, maxAgeDays: 7 } });
    const clearedRows = ok(await data("kept", ["retention", "--clear-rows"])).json<Obj>();
    expect(clearedRows).toMatchObject({ effective: { maxRows: 500, maxAgeDays: 7 }, override: { maxRows: null, maxAgeDays: 7 } });
    const clearedAge = ok(await data("kept", ["retention", "--clear-age"])).json();
    expect(clearedAge).toEqual(shown);

    failed(await data("kept", ["retention", "--max-rows", "5", "--clear-rows"]), "invalid_args");
    failed(await data("kept", ["retention", "--max-age-days", "0"]), "invalid_args");
    failed(await data("kept", ["retention", "--show", "--max-rows", "5"]), "invalid_args");
    failed(await data("nowhere", ["retention"]), "collection_not_found");
  });

  it("fails locally on argv errors and passes the relay's errors through with exit 1", async () => {
    failed(await me.cli(["data"]), "invalid_args");
    failed(await me.cli(["data", slug, "items"]), "invalid_args");
    const unknown = failed(await data("items", ["frobnicate"]), "unknown_command");
    expect(unknown.hint).toContain("service data --help");
    const flag = failed(await data("items", ["count", "--limit", "3"]), "invalid_args");
    expect(flag.message).toContain("--limit");
    failed(await me.cli(["data", "no-such-app-here", "items", "list"]), "app_not_found");
    failed(await data("nowhere", ["list"]), "collection_not_found");
    failed(await data("items", ["list"], { env: { SERVICE_API_KEY: "svc_00000000000000000000000000000000" } }), "invalid_api_key");
  });

  it("answers --help for the data command and every verb without running anything", async () => {
    for (const args of [["data", "--help"], ["data", slug, "items", "purge", "k", "-h"], ["data", slug, "items", "import", "--help"]]) {
      const run = ok(await me.cli(args));
      expect(run.stdout).toContain("Usage: service data <app> <collection> <verb>");
      for (const word of ["list", "count", "get <key>", "upsert", "update <key>", "delete <key>", "restore", "deleted", "purge", "import", "retention"]) expect(run.stdout).toContain(word);
      for (const flag of ["--where", "--sort", "--limit", "--since", "--all", "--data", "--key", "--on", "--if-match", "--yes", "--before", "--file", "--key-field", "--chunk", "--emit-effects", "--show", "--max-rows", "--max-age-days", "--clear-rows", "--clear-age"]) {
        expect(run.stdout).toContain(flag);
      }
    }
  });
});
