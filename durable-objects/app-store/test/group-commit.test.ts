// Group commit (group-commit.ts): single-row writes that reach the store together share
// one transaction and one after-commit pass, yet each keeps its own outcome. Proven two
// ways: on the queue itself inside a real store (a write that is refused or throws rolls
// back its own savepoint only; the others commit and are answered; the after-commit work
// runs once for the group with the entries of the writes that committed), and over HTTP
// (a burst of creates mixing good rows, schema violations and unique conflicts: each is
// answered on its own, only the good rows are stored, and the feed holds exactly one entry
// per stored row with no gap in its seqs).
import { describe, expect, it, vi } from "vitest";
import { RelayError } from "../../../src/errors";
import { GroupCommit } from "../group-commit";
import type { HeldEntry } from "../feed";
import { setup } from "../../../test/worker/rows/fixtures";

vi.setConfig({ testTimeout: 60_000 });

/** A stand-in feed entry naming the write that made it. */
const entryOf = (name: string) => ({ entry: { row_key: name }, prior: null }) as unknown as HeldEntry;

describe("group commit", () => {
  it("writes queued together commit together; a refused or throwing write rolls back alone", async () => {
    const ctx = await setup();
    const result = await ctx.sql(async (sql, _instance, state) => {
      sql.exec("CREATE TABLE IF NOT EXISTS group_commit_probe (name TEXT PRIMARY KEY)");
      const passes: string[][] = [];
      const commits = new GroupCommit(state.storage, (feed) => passes.push(feed.map((held) => held.entry.row_key)));
      const writeNamed = (name: string, then?: () => void) => (feed: HeldEntry[]) => {
        sql.exec("INSERT INTO group_commit_probe (name) VALUES (?)", name);
        feed.push(entryOf(name));
        then?.();
        return name;
      };
      const settled = await Promise.allSettled([
        commits.submit(writeNamed("first")),
        commits.submit(writeNamed("refused", () => { throw new RelayError("row_schema_violation", "refused on purpose"); })),
        commits.submit(writeNamed("second")),
        commits.submit(writeNamed("broken", () => { throw new Error("a bug, not a refusal"); })),
        // Same primary key as "first": SQLite refuses it, inside its own savepoint.
        commits.submit(writeNamed("first")),
        commits.submit(writeNamed("third")),
      ]);
      const stored = sql.exec<{ name: string }>("SELECT name FROM group_commit_probe ORDER BY name").toArray().map((row) => row.name);
      sql.exec("DROP TABLE group_commit_probe");
      return {
        outcomes: settled.map((one) => (one.status === "fulfilled" ? one.value : one.reason instanceof RelayError ? one.reason.code : "thrown")),
        stored, passes,
      };
    });
    expect(result.outcomes).toEqual(["first", "row_schema_violation", "second", "thrown", "thrown", "third"]);
    expect(result.stored).toEqual(["first", "second", "third"]);
    // One after-commit pass for the whole group, with only the committed writes' entries.
    expect(result.passes).toEqual([["first", "second", "third"]]);
  });

  it("a burst of creates over HTTP: each answered on its own, the feed one entry per stored row, no gap", async () => {
    const ctx = await setup();
    const bodies = Array.from({ length: 24 }, (_, i) => {
      if (i % 6 === 1) return { data: { title: 42 } }; // schema violation: title is a string
      if (i % 6 === 4) return { data: { title: `dup ${i}`, email: "same@example.com" } }; // one wins the unique email
      return { data: { title: `row ${i}` } };
    });
    const answers = await Promise.all(bodies.map(async (json) => {
      const res = await ctx.agentCall(ctx.path("tasks"), { json });
      return { status: res.status, body: (await res.json()) as { row?: { key: string }; error?: { code: string } } };
    }));
    answers.forEach((answer, i) => {
      if (i % 6 === 1) expect(answer).toMatchObject({ status: 422, body: { error: { code: "row_schema_violation" } } });
      else if (i % 6 !== 4) expect(answer.status).toBe(201);
    });
    const dupes = answers.filter((_, i) => i % 6 === 4);
    expect(dupes.filter((answer) => answer.status === 201)).toHaveLength(1);
    for (const lost of dupes.filter((answer) => answer.status !== 201)) expect(lost).toMatchObject({ status: 409, body: { error: { code: "unique_conflict" } } });
    const createdKeys = answers.filter((answer) => answer.status === 201).map((answer) => answer.body.row!.key).sort();
    expect(await ctx.storedCount()).toBe(createdKeys.length);
    const feed = await ctx.feedAll();
    expect(feed.map((entry) => entry.row_key).sort()).toEqual(createdKeys);
    const seqs = feed.map((entry) => entry.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
  });
});
