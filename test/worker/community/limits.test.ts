// Publishing's limits and refusals (WIRE §2.10): every field limit answers invalid_request
// naming the field, a manifest a template may not carry answers template_not_publishable
// naming each offending spot, setup steps that do not fit the manifest are refused, an
// unverified email and someone else's app are refused, and no refusal stores a snapshot.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError, json } from "../helpers";
import { deployApp, person, publish, todoManifest, todoPublisher, type Obj } from "./helpers";

async function snapshotsOf(humanId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM template_snapshots WHERE publisher_human_id = ?1").bind(humanId).first<{ n: number }>();
  return row!.n;
}

describe("publish limits and refusals", { timeout: 60_000 }, () => {
  it("refuses every field over its limit, naming the field", async () => {
    const { owner, appId } = await todoPublisher();
    const step = (over: Obj) => ({ kind: "config", key: "k", label: "Label", ...over });
    const cases: [Obj, string][] = [
      [{ title: "" }, "title"], [{ title: "x".repeat(81) }, "title"], [{ description: "x".repeat(201) }, "description"],
      [{ long_description: "x".repeat(4001) }, "long_description"], [{ tags: ["a", "b", "c", "d", "e", "f", "g"] }, "tags"],
      [{ tags: ["x".repeat(33)] }, "tags.0"], [{ slug: "ab" }, "slug"], [{ slug: "Todo" }, "slug"], [{ slug: "x".repeat(49) }, "slug"],
      [{ slug: "-todo" }, "slug"], [{ version: "1.0" }, "version"], [{ version: "v1.0.0" }, "version"],
      [{ setup_steps: Array.from({ length: 21 }, (_, i) => step({ key: `k${i}` })) }, "setup_steps"],
      [{ setup_steps: [step({ label: "x".repeat(81) })] }, "setup_steps.0.label"],
      [{ setup_steps: [step({ description: "x".repeat(301) })] }, "setup_steps.0.description"],
      [{ setup_steps: [step({ default: "x".repeat(201) })] }, "setup_steps.0.default"],
      [{ setup_steps: [step({ choices: Array.from({ length: 13 }, (_, i) => `c${i}`) })] }, "setup_steps.0.choices"],
      [{ setup_steps: [step({ valueHint: "x".repeat(121) })] }, "setup_steps.0.valueHint"],
      [{ setup_steps: [step({ key: "x".repeat(65) })] }, "setup_steps.0.key"],
      [{ setup_steps: [{ kind: "upload", label: "Logo" }] }, "setup_steps.0.key"],
      [{ setup_steps: [{ kind: "note", label: "Hi", key: "k" }] }, "setup_steps.0.key"],
      [{ setup_steps: [{ kind: "note", label: "Hi", ingestRule: "x" }] }, "setup_steps.0.ingestRule"],
      [{ setup_steps: [step({}), step({})] }, "setup_steps.1.key"],
      [{ setup_steps: [step({ choices: ["a"], default: "b" })] }, "setup_steps.0.default"],
      [{ setup_steps: [{ kind: "wizard", label: "x" }] }, "setup_steps.0.kind"],
      [{ setup_steps: [{ kind: "connect", label: "Hook up", ingestRule: "nope" }] }, "setup_steps.0.ingestRule"],
      [{ attest_example_only: "yes" }, "attest_example_only"], [{ surprise: true }, "surprise"],
    ];
    for (const [over, field] of cases) {
      const refused = await expectError(await publish(owner, { app_id: appId, ...over }), 400, "invalid_request");
      expect(refused.details?.field, JSON.stringify(over).slice(0, 80)).toBe(field);
    }
    await expectError(await publish(owner, {}), 400, "invalid_request");
    expect(await snapshotsOf(owner.human.humanId)).toBe(0);
  });

  it("refuses a literal webhook url, embedAncestors and agentTasks", async () => {
    const owner = await person();
    const appId = await deployApp(owner, todoManifest({
      webhooks: [{ on: "create", collection: "todos", url: "https://hooks.example.com/in" }],
      embedAncestors: ["https://blog.example.com"],
      collections: { todos: { read: ["owner"], write: ["owner"], delete: ["owner"] }, settings: { read: ["owner"], write: ["owner"], delete: ["owner"] }, summaries: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      agentTasks: [{ on: "create", collection: "todos", taskType: "triage", prompt: "Triage it.", reads: [], writes: ["summaries"] }],
    }));
    const refused = await expectError(await publish(owner, { app_id: appId }), 422, "template_not_publishable");
    expect((refused.details?.issues as { field: string }[]).map((issue) => issue.field)).toEqual([
      "manifest.webhooks.0.url", "manifest.embedAncestors", "manifest.agentTasks",
    ]);
    expect(await snapshotsOf(owner.human.humanId)).toBe(0);
  });

  it("refuses config steps with nowhere to keep answers, and a secret step on a readable settings collection", async () => {
    const owner = await person();
    const bare = await deployApp(owner, todoManifest({ settingsCollection: undefined }));
    const noSettings = await expectError(await publish(owner, { app_id: bare, setup_steps: [{ kind: "config", key: "team", label: "Team" }] }), 400, "invalid_request");
    expect(noSettings.details?.field).toBe("setup_steps.0.kind");
    const open = await deployApp(owner, todoManifest({
      collections: { todos: { read: ["owner"], write: ["owner"], delete: ["owner"] }, settings: { read: ["owner", "member"], write: ["owner"], delete: ["owner"] } },
    }));
    const secret = await expectError(await publish(owner, { app_id: open, setup_steps: [{ kind: "config", key: "token", label: "Token", secret: true }] }), 400, "invalid_request");
    expect(secret.details?.field).toBe("setup_steps.0.secret");
    expect(await snapshotsOf(owner.human.humanId)).toBe(0);
  });

  it("refuses an unverified email, another owner's app, a missing derived-from snapshot and an unclaimed agent", async () => {
    const { owner, appId } = await todoPublisher();
    const stranger = await person();
    await expectError(await publish(stranger, { app_id: appId }), 404, "app_not_found");
    await expectError(await publish(owner, { app_id: appId, derived_from_snapshot_id: "tpl_missing" }), 404, "template_not_found");
    await env.DB.prepare("UPDATE humans SET email_verified_at = NULL WHERE id = ?1").bind(owner.human.humanId).run();
    await expectError(await publish(owner, { app_id: appId }), 403, "email_not_verified");
    expect(await snapshotsOf(owner.human.humanId)).toBe(0);
    expect(await snapshotsOf(stranger.human.humanId)).toBe(0);
    const loose = await json<{ api_key: string }>(await (await import("../helpers")).call("/v1/register", { method: "POST", json: {} }), 201);
    await expectError(await publish({ human: owner.human, key: loose.api_key }, { app_id: appId }), 403, "agent_not_claimed");
  });
});
