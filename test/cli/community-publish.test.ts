// `service publisher …` and the publishing/review `service template …` verbs as real
// processes against the test relay, whose operator list names COMMUNITY_OPERATOR_EMAIL:
// a publisher claims a handle, updates the profile, publishes a todo app with two example
// rows and setup steps from a file; a non-operator is refused the queue; the operator
// lists the queue, shows the submission, rejects one version with a note and approves
// the next, and sets the publisher's trust; the publisher unpublishes. Local refusals
// (missing --note, bad level, no update flag) call nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, failed, ok, writeTempFile, type CliAgent } from "./helpers.ts";
import { COMMUNITY_OPERATOR_EMAIL } from "../support/community-operator.ts";

afterAll(() => {
  cleanupTempHomes();
});

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };
const MANIFEST = {
  $defs: { Todo: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false } },
  "x-service-manifest": {
    app: { name: "Todo" },
    collections: { todos: { schema: { $ref: "#/$defs/Todo" }, ...owned, seedOnInstall: true }, settings: owned },
    settingsCollection: "settings",
  },
};

type Answer = { snapshot_id: string; review_status: string; seeded_row_count: number; version: string; expedited: boolean };
type Detail = { snapshot_id: string; review_status: string; review_note: string | null; seed_rows: Record<string, unknown[]>; setup_steps: unknown[]; html: string };

describe("service publisher and service template (publishing and review)", () => {
  let publisher: CliAgent;
  let operator: CliAgent;
  let slug: string;
  const handle = `cli-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    publisher = await claimedCliAgent("cli-publisher");
    operator = await claimedCliAgent("cli-operator", COMMUNITY_OPERATOR_EMAIL);
    slug = `todo-${Math.random().toString(36).slice(2, 8)}`;
    ok(await publisher.cli(["deploy", appPackage(MANIFEST, "todo"), "--slug", slug]));
    for (const title of ["Buy milk", "Water plants"]) ok(await publisher.cli(["data", slug, "todos", "upsert", "--data", JSON.stringify({ title })]));
  });

  it("claims a handle, updates the profile and publishes with example rows", async () => {
    expect(ok(await publisher.cli(["publisher", "show"])).json()).toMatchObject({ claimed: false, handle: null, trust_level: "new" });
    expect(ok(await publisher.cli(["publisher", "claim", handle])).json()).toMatchObject({ claimed: true, handle });
    failed(await publisher.cli(["publisher", "claim", `${handle}-x`]), "handle_already_claimed");
    expect(ok(await publisher.cli(["publisher", "update", "--display-name", "CLI Apps", "--website", "https://cli.example.com"])).json())
      .toMatchObject({ display_name: "CLI Apps", url: "https://cli.example.com", bio: null });
    expect(ok(await publisher.cli(["publisher", "update", "--clear", "website"])).json()).toMatchObject({ display_name: "CLI Apps", url: null });
    failed(await publisher.cli(["publisher", "update", "--clear", "handle"]), "invalid_args");
    failed(await publisher.cli(["publisher", "update"]), "invalid_args");

    const steps = writeTempFile("steps.json", JSON.stringify([{ kind: "config", key: "team", label: "Team name", required: true }]));
    const first = ok(await publisher.cli([
      "template", "publish", slug, "--slug", "todo", "--title", "Team todo", "--tags", '["todo","team"]', "--setup-steps", steps, "--attest-example-only",
    ])).json<Answer>();
    expect(first).toMatchObject({ review_status: "pending", seeded_row_count: 2, version: "1.0.0", setup_step_count: 1, attest_example_only: true });
    failed(await publisher.cli(["template", "publish", slug, "--slug", "todo"]), "template_version_not_newer");
    failed(await publisher.cli(["template", "publish", slug, "--tags", "{not json"]), "invalid_args");

    // Only the operator reads the queue.
    failed(await publisher.cli(["template", "list-pending"]), "not_a_reviewer");
    failed(await publisher.cli(["template", "approve", first.snapshot_id]), "not_a_reviewer");

    const queue = ok(await operator.cli(["template", "list-pending", "--limit", "100"])).json<{ items: { snapshot_id: string }[] }>();
    expect(queue.items.map((item) => item.snapshot_id)).toContain(first.snapshot_id);
    const shown = ok(await operator.cli(["template", "show", first.snapshot_id])).json<Detail>();
    expect(shown.html).toContain("<h1>todo</h1>");
    expect(shown.seed_rows.todos).toHaveLength(2);
    expect(shown.setup_steps).toHaveLength(1);

    failed(await operator.cli(["template", "reject", first.snapshot_id]), "invalid_args");
    const rejected = ok(await operator.cli(["template", "reject", first.snapshot_id, "--note", "Say what the app does."])).json<Detail>();
    expect(rejected).toMatchObject({ review_status: "rejected", review_note: "Say what the app does." });

    const second = ok(await publisher.cli(["template", "publish", slug, "--slug", "todo", "--version", "1.0.1", "--description", "A shared todo list", "--attest-example-only"])).json<Answer>();
    expect(ok(await operator.cli(["template", "approve", second.snapshot_id])).json<Detail>().review_status).toBe("approved");
    expect(ok(await publisher.cli(["publisher", "show"])).json()).toMatchObject({ approved_template_count: 1 });

    failed(await operator.cli(["publisher", "set-trust", handle, "trusted"]), "invalid_args");
    expect(ok(await operator.cli(["publisher", "set-trust", handle, "established"])).json()).toMatchObject({ handle, trust_level: "established" });
    failed(await publisher.cli(["publisher", "set-trust", handle, "new"]), "not_a_reviewer");

    const third = ok(await publisher.cli(["template", "publish", slug, "--slug", "todo", "--version", "1.1.0"])).json<Answer & { auto_approved: boolean }>();
    expect(third).toMatchObject({ review_status: "approved", auto_approved: true, expedited: true });

    failed(await operator.cli(["template", "unpublish", third.snapshot_id]), "submission_not_found");
    const down = ok(await publisher.cli(["template", "unpublish", third.snapshot_id])).json<{ unpublished_at: string | null }>();
    expect(down.unpublished_at).toEqual(expect.any(String));
    expect(ok(await publisher.cli(["template", "unpublish", third.snapshot_id])).json<{ unpublished_at: string | null }>().unpublished_at).toBe(down.unpublished_at);
  });
});
