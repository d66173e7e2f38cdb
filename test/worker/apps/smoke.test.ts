import { describe, expect, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";

const manifest = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 500 } }, required: ["text"], additionalProperties: false } },
  "x-service-manifest": {
    app: { name: "Notes" },
    collections: { notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

describe("deploy smoke", () => {
  it("creates, shows, redeploys and is refused when dropping a collection", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human);
    const created = await json<{ app_id: string; slug: string; url: string }>(await call("/v1/apps", { key: agent.api_key, json: { html: "<h1>Hi</h1>", manifest } }), 201);
    expect(created.url).toBe(`http://${created.slug}.localhost:8787/`);
    const detail = await json<{ current_version: number; row_count: number }>(await call(`/v1/apps/${created.app_id}`, { key: agent.api_key }), 200);
    expect(detail.current_version).toBe(1);
    const redeployed = await json<{ version: number; compat: string }>(await call(`/v1/apps/${created.app_id}/versions`, { key: agent.api_key, json: { html: "<h1>Hi again</h1>" } }), 200);
    expect(redeployed).toMatchObject({ version: 2, compat: "clean" });
    const dropped = { ...manifest, "x-service-manifest": { ...manifest["x-service-manifest"], collections: {} } };
    const refused = await call(`/v1/apps/${created.app_id}/versions`, { key: agent.api_key, json: { manifest: dropped } });
    expect(refused.status).toBe(422);
    const forced = await json<{ version: number; compat: string }>(await call(`/v1/apps/${created.app_id}/versions`, { key: agent.api_key, json: { manifest: dropped, force: true } }), 200);
    expect(forced).toMatchObject({ version: 3, compat: "forced" });
    const doc = await json<{ html: string; version: number }>(await call(`/v1/apps/${created.app_id}/document`, { key: agent.api_key }), 200);
    expect(doc).toMatchObject({ html: "<h1>Hi again</h1>", version: 3 });
  });
});
