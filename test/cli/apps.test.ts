// The `service apps` verbs as a real process against the real test relay: list (status,
// limit, cursor, slug), show by id and by slug (including a link app whose slug looks like
// an id), update, share-link rotate, wake, the delete → deleted → restore → delete →
// purge round trip with its --yes refusals, and audit (table or --json, exit 1 on a high
// finding such as a public app whose collection anyone may read).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, appPackage, runCli, tempHome, claimedCliAgent, failed, ok, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;

function manifest(read: string[] = ["owner"], name = "Board"): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
    "x-service-manifest": { app: { name }, collections: { notes: { schema: { $ref: "#/$defs/Note" }, read, write: ["owner"], delete: ["owner"] } } },
  };
}

function packageDir(m: Obj): string {
  return appPackage(m, "board");
}

interface Created {
  app_id: string;
  slug: string;
  url: string;
  share_url?: string;
}

async function deploy(me: CliAgent, m: Obj, ...flags: string[]): Promise<Created> {
  return ok(await me.cli(["deploy", packageDir(m), ...flags])).json<Created>();
}

afterAll(() => {
  cleanupTempHomes();
});

describe("apps verbs", () => {
  let me: CliAgent;
  let board: Created;
  let open: Created;
  let link: Created;
  const slug = `board-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    me = await claimedCliAgent("cli-apps-test");
    board = await deploy(me, manifest(), "--slug", slug);
    open = await deploy(me, manifest(["anyone"], "Open"), "--visibility", "public");
    link = await deploy(me, manifest(["owner"], "Linked"), "--visibility", "link");
  });

  it("lists apps with status, limit, cursor and slug", async () => {
    const all = ok(await me.cli(["apps", "list"])).json<{ items: Obj[]; next_cursor: string | null }>();
    expect(all.items.map((a) => a.id).sort()).toEqual([board.app_id, open.app_id, link.app_id].sort());
    expect(all.next_cursor).toBeNull();
    expect(all.items[0]).toEqual({
      id: expect.any(String), slug: expect.any(String), visibility: expect.any(String), status: "active", url: expect.any(String),
      has_share_token: expect.any(Boolean), created_at: expect.any(String), last_activity_at: expect.any(String),
    });

    const first = ok(await me.cli(["apps", "list", "--limit", "2"])).json<{ items: Obj[]; next_cursor: string }>();
    expect(first.items).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = ok(await me.cli(["apps", "list", "--limit=2", "--cursor", first.next_cursor])).json<{ items: Obj[]; next_cursor: null }>();
    expect(second.items).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    expect([...first.items, ...second.items].map((a) => a.id).sort()).toEqual(all.items.map((a) => a.id).sort());

    expect(ok(await me.cli(["apps", "list", "--slug", slug])).json<{ items: Obj[] }>().items.map((a) => a.id)).toEqual([board.app_id]);
    expect(ok(await me.cli(["apps", "list", "--status", "deleted"])).json<{ items: Obj[] }>().items).toEqual([]);
    expect(ok(await me.cli(["apps", "list", "--status", "all"])).json<{ items: Obj[] }>().items).toHaveLength(3);

    failed(await me.cli(["apps", "list", "--status", "gone"]), "invalid_args");
    failed(await me.cli(["apps", "list", "--limit", "0"]), "invalid_args");
  });

  it("shows an app by id or by slug, including a link app whose slug looks like an id", async () => {
    const byId = ok(await me.cli(["apps", "show", board.app_id])).json<Obj>();
    expect(byId).toMatchObject({ id: board.app_id, slug, visibility: "private", status: "active", current_version: 1, timezone: null, row_count: 0 });
    expect(byId.manifest).toEqual(manifest());
    expect(ok(await me.cli(["apps", "show", slug])).json()).toEqual(byId);

    expect(link.slug).toMatch(/^[a-z][a-z0-9]{20,}$/);
    expect(ok(await me.cli(["apps", "show", link.slug])).json()).toMatchObject({ id: link.app_id, visibility: "link" });

    const missingSlug = failed(await me.cli(["apps", "show", "no-such-board"]), "app_not_found");
    expect(missingSlug.hint).toContain("apps list");
    failed(await me.cli(["apps", "show", "zzzzzzzzzzzzzzzzzzzzzzzzz"]), "app_not_found");
    failed(await me.cli(["apps", "show"]), "invalid_args");
  });

  it("updates visibility and timezone, rotates the share link, wakes", async () => {
    const tz = ok(await me.cli(["apps", "update", slug, "--timezone", "Europe/Paris"])).json();
    expect(tz).toEqual({ id: board.app_id, visibility: "private", timezone: "Europe/Paris" });

    const toLink = ok(await me.cli(["apps", "update", board.app_id, "--visibility", "link"])).json<{ share_url: string }>();
    expect(toLink).toMatchObject({ id: board.app_id, visibility: "link", share_url: expect.stringContaining("#k=") });
    const rotated = ok(await me.cli(["apps", "share-link", "rotate", slug])).json<{ share_url: string }>();
    expect(rotated.share_url).toContain("#k=");
    expect(rotated.share_url).not.toBe(toLink.share_url);

    const back = ok(await me.cli(["apps", "update", slug, "--visibility", "private"])).json();
    expect(back).toEqual({ id: board.app_id, visibility: "private", timezone: "Europe/Paris" });
    const notLink = failed(await me.cli(["apps", "share-link", "rotate", slug]), "conflict");
    expect(notLink.message).toContain("link");

    failed(await me.cli(["apps", "update", slug]), "invalid_args");
    failed(await me.cli(["apps", "update", slug, "--visibility", "secret"]), "invalid_args");
    failed(await me.cli(["apps", "update", slug, "--timezone", "Mars/Olympus"]), "invalid_request");
    failed(await me.cli(["apps", "share-link", "renew", slug]), "invalid_args");

    expect(ok(await me.cli(["apps", "wake", slug])).json()).toEqual({ id: board.app_id, status: "active" });
  });

  it("audits: a table by default, the report with --json, exit 1 while a high finding exists", async () => {
    const table = await me.cli(["apps", "audit"]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/^Audited 3 apps: 1 high, 0 medium, 0 low/);
    expect(table.stdout).toMatch(/high\s+open-\S+ \(public\)\s+notes\s+world_readable\s+Anyone/);
    expect(table.stderr).toMatch(/^warning: 1 high-severity finding/);

    const json = await me.cli(["apps", "audit", "--json"]);
    expect(json.code).toBe(1);
    const report = json.json<{ counts: Obj; items: Obj[]; apps_scanned: number }>();
    expect(report).toMatchObject({ apps_scanned: 3, apps_affected: 1, counts: { high: 1, medium: 0, low: 0 }, truncated: false });
    expect(report.items).toEqual([expect.objectContaining({
      app_id: open.app_id, highest_severity: "high",
      advisories: [expect.objectContaining({ code: "world_readable", collection: "notes", severity: "high" })],
    })]);

    // --severity filters the list, not the verdict.
    const low = await me.cli(["apps", "audit", "--json", "--severity", "low"]);
    expect(low.code).toBe(1);
    expect(low.json()).toMatchObject({ apps_affected: 0, items: [], counts: { high: 1 } });
    failed(await me.cli(["apps", "audit", "--severity", "urgent"]), "invalid_args");

    // Narrowing the collection (no gate break) clears the finding: exit 0.
    const fixed = packageDir(manifest());
    ok(await me.cli(["deploy", fixed, "--app", open.slug]));
    const clean = ok(await me.cli(["apps", "audit"]));
    expect(clean.stdout).toContain("No findings.");
    expect(clean.stderr).toBe("");
    expect(ok(await me.cli(["apps", "audit", "--json"])).json()).toMatchObject({ counts: { high: 0 }, items: [] });
  });

  it("deletes (only with --yes), lists deleted, restores, and purges (only with --yes)", async () => {
    const refused = failed(await me.cli(["apps", "delete", slug]), "invalid_args");
    expect(refused.hint).toContain("service apps delete --help");
    expect(ok(await me.cli(["apps", "show", slug])).json()).toMatchObject({ status: "active" });

    expect(ok(await me.cli(["apps", "delete", slug, "--yes"])).json()).toEqual({ deleted: true, app_id: board.app_id });
    const deleted = ok(await me.cli(["apps", "deleted"])).json<{ items: Obj[]; next_cursor: null }>();
    expect(deleted.items.map((a) => [a.id, a.status])).toEqual([[board.app_id, "deleted"]]);
    expect(ok(await me.cli(["apps", "list"])).json<{ items: Obj[] }>().items.map((a) => a.id)).not.toContain(board.app_id);
    expect(ok(await me.cli(["apps", "show", slug])).json()).toMatchObject({ id: board.app_id, status: "deleted", deleted_at: expect.any(String) });

    // Restore by id: the id of a deleted app still resolves.
    expect(ok(await me.cli(["apps", "restore", board.app_id])).json()).toMatchObject({ id: board.app_id, status: "active", deleted_at: null });
    expect(ok(await me.cli(["apps", "deleted"])).json<{ items: Obj[] }>().items).toEqual([]);

    failed(await me.cli(["apps", "purge", slug, "--yes"]), "conflict"); // only deleted apps can be purged
    ok(await me.cli(["apps", "delete", board.app_id, "--yes"]));
    failed(await me.cli(["apps", "purge", board.app_id]), "invalid_args");
    expect(ok(await me.cli(["apps", "purge", board.app_id, "--yes"])).json()).toEqual({ id: board.app_id, purged: true });
    failed(await me.cli(["apps", "show", slug]), "app_not_found");
    failed(await me.cli(["apps", "show", board.app_id]), "app_not_found");
    expect(ok(await me.cli(["apps", "list", "--status", "all"])).json<{ items: Obj[] }>().items).toHaveLength(2);
  });

  it("answers --help for the noun and every verb without calling the relay", async () => {
    const noun = ok(await runCli(tempHome(), ["apps", "--help"]));
    for (const verb of ["list", "show", "audit", "update", "share-link", "delete", "deleted", "restore", "purge", "wake"]) {
      expect(noun.stdout).toContain(verb);
      const run = ok(await runCli(tempHome(), ["apps", verb, "-h", "--url", "http://127.0.0.1:9"]));
      expect(run.stdout).toContain(`Usage: service apps ${verb}`);
    }
  });
});
