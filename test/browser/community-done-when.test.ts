// Issue 14's "done when", as new users would do it, with the real CLI and real Chromium
// against the test relay: one agent publishes its todo app with two example rows
// (`service template publish … --attest-example-only`); the operator (the human on
// COMMUNITY_REVIEW_OPERATOR_EMAILS) finds it in the console's review queue and clicks
// Approve; a second person's agent installs it with `service template install
// <handle>/todo --config …` and gets an app of its own with the example rows, and leaves a
// four-star review the gallery then shows; the publisher republishes 1.1.0, the operator
// approves that too, and the installer's `template upgrade-check` offers it, `template
// upgrade` applies it and `template revert` takes it back.
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { relayUrl, signInHere, useBrowser } from "./support";
import { appPackage, claimedCliAgent, cleanupTempHomes, ok, writeTempFile, type CliAgent } from "../cli/helpers";
import { COMMUNITY_OPERATOR_EMAIL } from "../support/community-operator";

const { newPage } = useBrowser();

afterAll(() => {
  cleanupTempHomes();
});

type Obj = Record<string, unknown>;

/** A collection only its owner reads and writes, rows checked against `#/$defs/<def>`. */
const ownerOnly = (def: string) => ({ schema: { $ref: `#/$defs/${def}` }, read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] });

/** A todo app whose settings collection keeps the install answer (the team's name). */
const MANIFEST = {
  $defs: {
    Todo: { type: "object", properties: { title: { type: "string" }, done: { type: "boolean" } }, required: ["title"], additionalProperties: false },
    Settings: { type: "object", properties: { team: { type: "string" } }, additionalProperties: false },
  },
  "x-service-manifest": {
    app: { name: "Todo" },
    collections: {
      todos: { ...ownerOnly("Todo"), seedOnInstall: true },
      settings: ownerOnly("Settings"),
    },
    settingsCollection: "settings",
  },
};

const EXAMPLE_TITLES = ["Buy milk", "Water the plants"];

/** Opens the review queue, signing in as the operator through the outbox when asked. */
async function operatorConsole(): Promise<Page> {
  const p = await newPage();
  await p.goto(`${relayUrl}/console/review`);
  await signInHere(p, COMMUNITY_OPERATOR_EMAIL);
  await p.waitForURL(`${relayUrl}/console/review`);
  return p;
}

/** From the queue (following its pages), opens the submission and clicks Approve. */
async function approveInConsole(p: Page, snapshotId: string): Promise<void> {
  await p.goto(`${relayUrl}/console/review`);
  const row = p.locator(`tr[data-snapshot-id="${snapshotId}"]`);
  while (!(await row.count())) {
    await p.locator("#next-page").click();
    await p.locator("main h1", { hasText: "Review queue" }).waitFor();
  }
  await row.locator("a").click();
  await p.locator("#submission-html").waitFor();
  await p.getByRole("button", { name: "Approve" }).click();
  await p.locator("#flash", { hasText: "Approved" }).waitFor();
  expect(await p.locator('dd[data-fact="status"]').textContent()).toBe("approved");
}

describe("issue 14 done when: publish, approve in the console, install, review, upgrade, revert", { timeout: 240_000 }, () => {
  it("runs end to end as new users would", async () => {
    const publisher: CliAgent = await claimedCliAgent("dw-publisher");
    const installer: CliAgent = await claimedCliAgent("dw-installer");
    const handle = `dw-${Math.random().toString(36).slice(2, 8)}`;
    const source = `todo-${Math.random().toString(36).slice(2, 8)}`;
    const steps = writeTempFile("steps.json", JSON.stringify([
      { kind: "note", label: "Your own todo list, with two examples to start from" },
      { kind: "config", key: "team", label: "Team name", required: true },
    ]));

    // The publisher's agent: a todo app with two example rows, a handle, and the publish.
    ok(await publisher.cli(["deploy", appPackage(MANIFEST, "todo"), "--slug", source]));
    for (const title of EXAMPLE_TITLES) ok(await publisher.cli(["data", source, "todos", "upsert", "--data", JSON.stringify({ title })]));
    ok(await publisher.cli(["publisher", "claim", handle]));
    const publish = async (version: string) => ok(await publisher.cli([
      "template", "publish", source, "--slug", "todo", "--version", version, "--title", "Team todos", "--description", "A todo list for a team",
      "--setup-steps", steps, "--attest-example-only",
    ])).json<{ snapshot_id: string; review_status: string; seeded_row_count: number }>();
    const first = await publish("1.0.0");
    expect(first).toMatchObject({ review_status: "pending", seeded_row_count: 2 });

    // The operator approves it in the console.
    const ops = await operatorConsole();
    await approveInConsole(ops, first.snapshot_id);
    await ops.goto(`${relayUrl}/console/gallery/${handle}/todo`);
    await ops.locator("main h1", { hasText: "Team todos" }).waitFor();

    // A second person's agent installs it and gets its own app with the example rows.
    const app = ok(await installer.cli(["template", "install", `${handle}/todo`, "--config", JSON.stringify({ team: "Blue team" })]))
      .json<{ app_id: string; slug: string; url: string }>();
    const rows = ok(await installer.cli(["data", app.slug, "todos", "list"])).json<{ rows: { data: { title: string } }[] }>();
    expect(rows.rows.map((row) => row.data.title).sort()).toEqual([...EXAMPLE_TITLES].sort());
    expect(ok(await installer.cli(["data", app.slug, "settings", "get", "install-config"])).json<{ row: { data: Obj } }>().row.data).toEqual({ team: "Blue team" });
    ok(await installer.cli(["data", app.slug, "todos", "upsert", "--data", JSON.stringify({ title: "Our own todo" })]));

    // A four-star review, shown on the template's page in the gallery.
    expect(ok(await installer.cli(["review", "create", `${handle}/todo`, "--stars", "4", "--body", "Does what it says"])).json()).toMatchObject({ stars: 4, status: "visible" });
    await ops.goto(`${relayUrl}/console/gallery/${handle}/todo`);
    expect(await ops.locator("#template-rating").textContent()).toBe("4 ★ (1 review)");
    expect(await ops.locator("#reviews li").first().getAttribute("data-stars")).toBe("4");

    // The publisher republishes 1.1.0; once approved, the installer's upgrade-check offers it.
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: false, from_version: "1.0.0" });
    const next = await publish("1.1.0");
    await approveInConsole(ops, next.snapshot_id);
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: true, from_version: "1.0.0", to_version: "1.1.0", snapshot_id: next.snapshot_id });
    expect(ok(await installer.cli(["template", "upgrade", app.slug, "--expect-version", "1.1.0"])).json()).toMatchObject({ from_version: "1.0.0", to_version: "1.1.0" });
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: false, from_version: "1.1.0" });
    expect(ok(await installer.cli(["template", "revert", app.slug])).json()).toMatchObject({ template_version: "1.0.0" });
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: true, from_version: "1.0.0", to_version: "1.1.0" });

    // The installer's rows survived the upgrade and the revert.
    const kept = ok(await installer.cli(["data", app.slug, "todos", "list"])).json<{ rows: { data: { title: string } }[] }>();
    expect(kept.rows.map((row) => row.data.title).sort()).toEqual([...EXAMPLE_TITLES, "Our own todo"].sort());
  });
});
