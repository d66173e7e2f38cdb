// The install half of issue 14's done-when as real processes against the test relay: a
// publisher's todo app with two example rows is published and approved by the operator
// (COMMUNITY_OPERATOR_EMAIL); a second person's agent reads the config contract, installs
// it with --config and gets an app of its own with the example rows, leaves a four-star
// review the publisher answers; the publisher republishes 1.1.0 and the installer's
// `template upgrade-check` offers it, `template upgrade` applies it and `template revert`
// takes it back. Local refusals (bad refs, stars, --config, respond flags) call nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, failed, ok, writeTempFile, type CliAgent } from "./helpers.ts";
import { COMMUNITY_OPERATOR_EMAIL } from "../support/community-operator.ts";

afterAll(() => {
  cleanupTempHomes();
});

/** A todo app whose settings collection takes exactly the install answers this test gives. */
const MANIFEST = {
  $defs: {
    Todo: { type: "object", properties: { title: { type: "string" }, done: { type: "boolean" } }, required: ["title"], additionalProperties: false },
    Answers: { type: "object", properties: { team: { type: "string" }, colour: { enum: ["red", "blue"] } }, additionalProperties: false },
  },
  "x-service-manifest": {
    app: { name: "Todo" },
    collections: Object.fromEntries([["todos", "Todo", true], ["settings", "Answers", false]].map(([name, def, seeded]) => [name, {
      schema: { $ref: `#/$defs/${def}` }, read: ["owner"], write: ["owner"], delete: ["owner"], ...(seeded ? { seedOnInstall: true } : {}),
    }])),
    settingsCollection: "settings",
  },
};

type Obj = Record<string, unknown>;

describe("service template install, upgrade, revert and service review", () => {
  let publisher: CliAgent;
  let operator: CliAgent;
  let installer: CliAgent;
  let sourceSlug: string;
  const handle = `inst-${Math.random().toString(36).slice(2, 8)}`;
  const ref = `${handle}/todo`;

  async function publishApproved(version: string): Promise<string> {
    const steps = writeTempFile("steps.json", JSON.stringify([
      { kind: "config", key: "team", label: "Team name", required: true },
      { kind: "config", key: "colour", label: "Colour", choices: ["red", "blue"], default: "blue" },
    ]));
    const published = ok(await publisher.cli(["template", "publish", sourceSlug, "--slug", "todo", "--version", version, "--setup-steps", steps, "--attest-example-only"])).json<{ snapshot_id: string }>();
    ok(await operator.cli(["template", "approve", published.snapshot_id]));
    return published.snapshot_id;
  }

  beforeAll(async () => {
    publisher = await claimedCliAgent("cli-publisher");
    operator = await claimedCliAgent("cli-operator", COMMUNITY_OPERATOR_EMAIL);
    installer = await claimedCliAgent("cli-installer");
    sourceSlug = `todo-${Math.random().toString(36).slice(2, 8)}`;
    ok(await publisher.cli(["deploy", appPackage(MANIFEST, "todo"), "--slug", sourceSlug]));
    for (const title of ["Buy milk", "Water plants"]) ok(await publisher.cli(["data", sourceSlug, "todos", "upsert", "--data", JSON.stringify({ title })]));
    ok(await publisher.cli(["publisher", "claim", handle]));
  });

  it("installs with --config, reviews, upgrades to a republished version and reverts", async () => {
    const first = await publishApproved("1.0.0");
    const contract = ok(await installer.cli(["template", "config-contract", ref])).json<Obj>();
    expect(contract).toMatchObject({ snapshot_id: first, slug: "todo", settings_collection: "settings" });
    expect((contract.config_steps as Obj[]).map((step) => step.key)).toEqual(["team", "colour"]);

    failed(await installer.cli(["template", "install", ref]), "invalid_request");
    const app = ok(await installer.cli(["template", "install", ref, "--config", '{"team":"Blue team"}'])).json<{ app_id: string; slug: string; url: string }>();
    expect(Object.keys(app).sort()).toEqual(["app_id", "slug", "url"]);
    const rows = ok(await installer.cli(["data", app.slug, "todos", "list"])).json<{ rows: { data: { title: string } }[] }>();
    expect(rows.rows.map((row) => row.data.title).sort()).toEqual(["Buy milk", "Water plants"]);
    const settings = ok(await installer.cli(["data", app.slug, "settings", "get", "install-config"])).json<{ row: { data: Obj } }>();
    expect(settings.row.data).toEqual({ team: "Blue team", colour: "blue" });

    const review = ok(await installer.cli(["review", "create", ref, "--stars", "4", "--body", "Does what it says"])).json<{ id: string; stars: number; status: string }>();
    expect(review).toMatchObject({ stars: 4, status: "visible" });
    failed(await installer.cli(["review", "create", ref, "--stars", "5"]), "conflict");
    expect(ok(await publisher.cli(["review", "respond", review.id, "--response", "Thanks!"])).json()).toMatchObject({ publisher_response: "Thanks!" });
    expect(ok(await publisher.cli(["review", "respond", review.id, "--clear"])).json()).toMatchObject({ publisher_response: null });
    expect(ok(await operator.cli(["review", "report", review.id, "--reason", "checking"])).json()).toMatchObject({ review_id: review.id });
    expect(ok(await publisher.cli(["publisher", "show"])).json()).toMatchObject({ rating_count: 1, rating_sum: 4 });

    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: false, from_version: "1.0.0" });
    const next = await publishApproved("1.1.0");
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: true, from_version: "1.0.0", to_version: "1.1.0", snapshot_id: next, compat: "clean" });
    failed(await installer.cli(["template", "upgrade", app.slug, "--expect-version", "2.0.0"]), "conflict");
    expect(ok(await installer.cli(["template", "upgrade", app.slug, "--expect-version", "1.1.0"])).json()).toMatchObject({ from_version: "1.0.0", to_version: "1.1.0", snapshot_id: next });
    expect(ok(await installer.cli(["template", "revert", app.slug])).json()).toMatchObject({ template_version: "1.0.0" });
    expect(ok(await installer.cli(["template", "upgrade-check", app.slug])).json()).toMatchObject({ available: true, from_version: "1.0.0", revert_available: false });
  });

  it("refuses bad arguments locally", async () => {
    failed(await installer.cli(["template", "install", "a/b/c"]), "invalid_args");
    failed(await installer.cli(["template", "install", ref, "--config", "[1]"]), "invalid_args");
    failed(await installer.cli(["template", "install", ref, "--config", '{"team":1}']), "invalid_args");
    failed(await installer.cli(["template", "config-contract", "/todo"]), "invalid_args");
    failed(await installer.cli(["review", "create", "no-slash", "--stars", "4"]), "invalid_args");
    failed(await installer.cli(["review", "create", ref, "--stars", "9"]), "invalid_args");
    failed(await installer.cli(["review", "create", ref]), "invalid_args");
    failed(await installer.cli(["review", "respond", "rev_x"]), "invalid_args");
    failed(await installer.cli(["review", "respond", "rev_x", "--response", "a", "--clear"]), "invalid_args");
    failed(await installer.cli(["review", "report", "rev_x"]), "invalid_args");
  });
});
