// `service taste get|set|clear` and `service feedback create|list` as real processes
// against the test relay: notes from a file, from `--file -` and from piped stdin, the
// clear confirmation, feedback with a message from stdin and about an app, paging with
// --before, and local refusals (invalid_args, confirmation_required) that call nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, failed, ok, writeTempFile, type CliAgent } from "./helpers.ts";

afterAll(() => {
  cleanupTempHomes();
});

const MANIFEST = {
  $defs: { Note: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false } },
  "x-service-manifest": { app: { name: "Feedback target" }, collections: { notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"] } } },
};

interface Taste { taste: string | null; updated_at: string | null; bytes: number }

describe("service taste", () => {
  let me: CliAgent;
  beforeAll(async () => {
    me = await claimedCliAgent("cli-taste-test");
  });

  it("sets from a file, from --file - and from piped stdin, reads back, and clears with --yes", async () => {
    expect(ok(await me.cli(["taste", "get"])).json<Taste>()).toEqual({ taste: null, updated_at: null, bytes: 0 });

    const file = writeTempFile("taste.md", "# Taste\n- calm colours\n- no modals\n");
    const fromFile = ok(await me.cli(["taste", "set", "--file", file])).json<Taste>();
    expect(fromFile).toMatchObject({ taste: "# Taste\n- calm colours\n- no modals\n", bytes: 35 });

    const dashed = ok(await me.cli(["taste", "set", "--file", "-"], { stdin: "Liebt Grün ✓" })).json<Taste>();
    expect(dashed).toMatchObject({ taste: "Liebt Grün ✓", bytes: Buffer.byteLength("Liebt Grün ✓") });

    ok(await me.cli(["taste", "set"], { stdin: "piped notes" }));
    expect(ok(await me.cli(["taste", "get"])).json<Taste>().taste).toBe("piped notes");

    const refused = failed(await me.cli(["taste", "clear"]), "confirmation_required");
    expect(refused.hint).toContain("--yes");
    expect(ok(await me.cli(["taste", "get"])).json<Taste>().taste).toBe("piped notes");

    expect(ok(await me.cli(["taste", "clear", "--yes"])).json()).toEqual({ cleared: true });
    expect(ok(await me.cli(["taste", "clear", "--yes"])).json()).toEqual({ cleared: true });
    expect(ok(await me.cli(["taste", "get"])).json<Taste>().taste).toBeNull();
  });

  it("refuses blank or missing text and unreadable files before calling, and shows the relay's cap refusal", async () => {
    ok(await me.cli(["taste", "set", "--file", "-"], { stdin: "kept" }));
    failed(await me.cli(["taste", "set"]), "invalid_args");
    failed(await me.cli(["taste", "set", "--file", "-"], { stdin: "  \n" }), "invalid_args");
    failed(await me.cli(["taste", "set", "--file", "/nonexistent/taste.md"]), "invalid_args");
    failed(await me.cli(["taste", "set", "--file", "-", "--bogus"]), "invalid_args");
    const big = failed(await me.cli(["taste", "set", "--file", "-"], { stdin: "x".repeat(16_385) }), "payload_too_large");
    expect(big.details).toMatchObject({ limit: 16_384 });
    expect(ok(await me.cli(["taste", "get"])).json<Taste>().taste).toBe("kept");
  });
});

describe("service feedback", () => {
  let me: CliAgent;
  let appId = "";
  beforeAll(async () => {
    me = await claimedCliAgent("cli-feedback-test");
    appId = ok(await me.cli(["deploy", appPackage(MANIFEST, "feedback")])).json<{ app_id: string }>().app_id;
  });

  it("files feedback (message inline or from stdin, optionally about an app) and lists it newest first", async () => {
    const first = ok(await me.cli(["feedback", "create", "--type", "bug", "--message", "watch stops after a minute"])).json<Record<string, unknown>>();
    expect(Object.keys(first).sort()).toEqual(["created_at", "id", "type"]);
    const second = ok(await me.cli(["feedback", "create", "--type", "feature", "--message", "-", "--app-id", appId], { stdin: "  batch deletes please\n" })).json<{ id: string }>();
    const third = ok(await me.cli(["feedback", "create", "--type=note", "--message=thanks"])).json<{ id: string }>();

    const all = ok(await me.cli(["feedback", "list"])).json<{ items: Array<{ id: string; type: string; message: string; app_id: string | null }>; next_before?: string }>();
    expect(all.items.map((item) => item.id)).toEqual([third.id, second.id, first.id]);
    expect(all.items[1]).toMatchObject({ type: "feature", message: "batch deletes please", app_id: appId });
    expect(all.next_before).toBeUndefined();

    const page = ok(await me.cli(["feedback", "list", "--limit", "2"])).json<{ items: Array<{ id: string }>; next_before?: string }>();
    expect(page.items.map((item) => item.id)).toEqual([third.id, second.id]);
    expect(page.next_before).toBe(second.id);
    const rest = ok(await me.cli(["feedback", "list", "--limit", "2", "--before", page.next_before!])).json<{ items: Array<{ id: string }>; next_before?: string }>();
    expect(rest).toEqual({ items: [expect.objectContaining({ id: first.id })] });
  });

  it("refuses bad flags locally and passes the relay's refusals through", async () => {
    failed(await me.cli(["feedback", "create", "--message", "x"]), "invalid_args");
    failed(await me.cli(["feedback", "create", "--type", "praise", "--message", "x"]), "invalid_args");
    failed(await me.cli(["feedback", "create", "--type", "bug"]), "invalid_args");
    failed(await me.cli(["feedback", "create", "--type", "bug", "--message", "-"], { stdin: " \n" }), "invalid_args");
    failed(await me.cli(["feedback", "list", "--limit", "0"]), "invalid_args");
    failed(await me.cli(["feedback", "list", "--limit", "101"]), "invalid_args");
    failed(await me.cli(["feedback", "create", "--type", "bug", "--message", "x".repeat(4001)]), "invalid_request");
    failed(await me.cli(["feedback", "create", "--type", "bug", "--message", "x", "--app-id", "anotmyappatallxxxxxxxxxx"]), "app_not_found");
    failed(await me.cli(["feedback", "list", "--before", "fb_nosuchitem"]), "invalid_request");
  });
});
