// Publishing (WIRE §2.10): an owned app's live version becomes a pending submission with
// the document, manifest and steps; seed rows only when the publisher attests they are
// example data, and then only from seedOnInstall collections other than the settings
// collection; a republish of a slug must carry a greater semver; the reviewer sees the
// destinations the app would send data to. The snapshot never holds members, grants,
// credentials, connections or secrets.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import { asOperator, deployApp, person, publish, todoManifest, todoPublisher, todoPage, type Obj } from "./helpers";

type Answer = { snapshot_id: string; review_status: string; seeded_row_count: number; version: string; expedited: boolean; auto_approved: boolean; slug: string | null };
type Detail = Obj & { html: string; manifest: Obj; seed_rows: Record<string, { key: string; data: Obj }[]>; seed_summary: Obj; external_destinations: Obj[]; setup_steps: Obj[] };

describe("publish", () => {
  it("snapshots the live version with attested example rows only", async () => {
    const { owner, appId } = await todoPublisher();
    await json(await call(`/v1/apps/${appId}/credentials`, { key: owner.key, json: { label: "backend", grants: [{ collection: "todos", ops: ["read"] }] } }), 201);
    // A member, a credential and a connection exist on the app; none may reach the snapshot.
    const member = await person("member");
    await json(await call(`/v1/apps/${appId}/members`, { key: owner.key, json: { email: member.human.email, role: "member" } }), 201);
    await json(await call(`/v1/apps/${appId}/connections`, { key: owner.key, json: { name: "crm", kind: "static", allowedHost: "api.crm.example.com", headerName: "Authorization", headerValue: "Bearer crm-secret-value" } }), 201);

    const steps = [
      { kind: "config", key: "teamName", label: "Team name", required: true, valueHint: "Acme" },
      { kind: "config", key: "apiToken", label: "API token", secret: true },
      { kind: "note", label: "Invite your team after installing" },
    ];
    const answer = await json<Answer>(await publish(owner, {
      app_id: appId, title: "Team todo", description: "A shared list", tags: ["todo", "team"], slug: "team-todo",
      changelog_note: "First version", setup_steps: steps, attest_example_only: true,
    }), 201);
    expect(answer).toMatchObject({
      review_status: "pending", name: "Team todo", seeded_row_count: 2, slug: "team-todo", version: "1.0.0",
      setup_step_count: 3, attest_example_only: true, expedited: false, auto_approved: false,
    });
    expect(answer.snapshot_id).toMatch(/^tpl_/);

    const operator = await person("operator");
    const detail = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${answer.snapshot_id}`), 200);
    expect(detail.html).toBe(todoPage);
    expect(detail.manifest).toEqual(todoManifest());
    expect(Object.keys(detail.seed_rows)).toEqual(["todos"]);
    expect(detail.seed_rows.todos.map((row) => [row.key, row.data])).toEqual([["t1", { title: "Buy milk" }], ["t2", { title: "Water plants", done: true }]]);
    expect(detail.seed_summary).toMatchObject({ total_rows: 2, collections: [{ collection: "todos", row_count: 2 }] });
    expect(detail.setup_steps).toEqual(steps);
    expect(detail).toMatchObject({
      tags: ["todo", "team"], description: "A shared list", changelog: "First version", review_status: "pending",
      source_app_id: appId, publisher_human_id: owner.human.humanId, version_id: expect.stringContaining(appId),
      reviewed_at: null, review_note: null, superseded_at: null, derived_from_snapshot_id: null, publisher_trust_level: "new",
    });
    expect(detail.external_destinations).toEqual([{ kind: "fetch", host: "api.crm.example.com", viaConnection: "crm" }]);

    // What is stored: nothing of the settings row, drafts, credentials or connection secrets.
    const stored = await env.DB.prepare("SELECT * FROM template_snapshots WHERE id = ?1").bind(answer.snapshot_id).first<Record<string, unknown>>();
    const everything = JSON.stringify(stored);
    for (const secret of ["very-secret", "private draft", "crm-secret-value", "svcs_", "install-config", member.human.email, member.human.humanId]) {
      expect(everything).not.toContain(secret);
    }
  });

  it("is refused with community_publish_disabled when the relay turned publishing off, and stores nothing", async () => {
    const { owner, appId } = await todoPublisher();
    const slug = `off-${crypto.randomUUID().slice(0, 6)}`;
    const before = await env.DB.prepare("SELECT count(*) AS n FROM template_snapshots").first<{ n: number }>();
    await expectError(await callWith({ COMMUNITY_PUBLISH_ENABLED: "false" }, "/v1/community/publish", { key: owner.key, json: { app_id: appId, slug } }), 403, "community_publish_disabled");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM template_snapshots").first<{ n: number }>()).toEqual(before);
    expect((await json<Answer>(await publish(owner, { app_id: appId, slug }), 201)).slug).toBe(slug);
  });

  it("copies no rows without the attestation, and orders versions of a slug", async () => {
    const { owner, appId } = await todoPublisher();
    const slug = `todo-${crypto.randomUUID().slice(0, 6)}`;
    const first = await json<Answer>(await publish(owner, { app_id: appId, slug }), 201);
    expect(first).toMatchObject({ seeded_row_count: 0, attest_example_only: null, version: "1.0.0", name: "Todo" });
    const unattested = await json<Answer>(await publish(owner, { app_id: appId, slug, version: "1.0.1", attest_example_only: false }), 201);
    expect(unattested).toMatchObject({ seeded_row_count: 0, attest_example_only: false });

    for (const version of ["1.0.1", "1.0.0", "0.9.9", "1.0.1-beta.1"]) {
      const refused = await expectError(await publish(owner, { app_id: appId, slug, version }), 409, "template_version_not_newer");
      expect(refused.details).toMatchObject({ field: "version", latest: "1.0.1" });
    }
    expect((await json<Answer>(await publish(owner, { app_id: appId, slug, version: "1.1.0" }), 201)).version).toBe("1.1.0");
    // Another publisher's slug of the same name is theirs to number.
    const other = await todoPublisher();
    expect((await json<Answer>(await publish(other.owner, { app_id: other.appId, slug, version: "0.1.0" }), 201)).version).toBe("0.1.0");
    // No slug: one is made from the title; a title that makes none leaves the template reachable by its id only.
    expect((await json<Answer>(await publish(owner, { app_id: appId, title: "Todo list, for Teams!" }), 201)).slug).toBe("todo-list-for-teams");
    await expectError(await publish(owner, { app_id: appId, title: "Todo list for teams" }), 409, "template_version_not_newer");
    expect((await json<Answer>(await publish(owner, { app_id: appId, title: "✓✓" }), 201)).slug).toBeNull();
    expect((await json<Answer>(await publish(owner, { app_id: appId, title: "✓✓" }), 201)).slug).toBeNull();
  });

  it("lists webhook, embed and fetch destinations for the reviewer", async () => {
    const owner = await person();
    const appId = await deployApp(owner, todoManifest({
      webhooks: [{ on: "create", collection: "todos", urlFromSetting: "hookUrl" }],
      embeds: ["https://www.youtube.com"],
      externalHosts: ["https://api.weather.example.com"],
    }));
    const answer = await json<Answer>(await publish(owner, { app_id: appId }), 201);
    const detail = await json<Detail>(await asOperator(await person("operator"), `/v1/community/submissions/${answer.snapshot_id}`), 200);
    expect(detail.external_destinations).toEqual([
      { kind: "webhook", host: "*", fromSetting: "hookUrl" },
      { kind: "embed", host: "www.youtube.com" },
      { kind: "fetch", host: "api.weather.example.com" },
    ]);
  });
});
