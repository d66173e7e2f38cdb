// Starter rows (input_data, CONTRACT §6) are written with the deploy or not at all, and a
// redeploy that adds `unique` over live rows sharing a value is refused (WIRE §5.2).
import { describe, expect, it } from "vitest";
import { call, claimedAgent, count, expectError, json, signIn } from "../helpers";

const schema = { type: "object", properties: { email: { type: "string" }, name: { type: "string" } }, required: ["name"], additionalProperties: false };
function manifest(unique: string[] = []) {
  return {
    $defs: { Person: schema },
    "x-service-manifest": {
      app: { name: "People" },
      collections: { people: { schema: { $ref: "#/$defs/Person" }, read: ["owner"], write: ["owner"], delete: ["owner"], ...(unique.length ? { unique } : {}) } },
    },
  };
}

async function agentKey(): Promise<string> {
  return (await claimedAgent(await signIn())).api_key;
}

describe("input_data", () => {
  it("writes the starter rows with the deploy, stamped as the system", async () => {
    const key = await agentKey();
    const app = await json<{ app_id: string }>(await call("/v1/apps", {
      key, json: { html: "<p>x</p>", manifest: manifest(["email"]), input_data: { people: [{ key: "ada", data: { name: "Ada", email: "ada@x.io" } }, { data: { name: "Bob" } }] } },
    }), 201);
    const rows = await json<{ rows: { key: string; author: { kind: string } }[] }>(await call(`/v1/apps/${app.app_id}/collections/people`, { key }), 200);
    expect(rows.rows).toHaveLength(2);
    expect(rows.rows[0]).toMatchObject({ key: "ada", author: { kind: "system" } });
  });

  it("a row failing its schema refuses the whole deploy with input_schema_violation and the path", async () => {
    const key = await agentKey();
    const before = await count("apps");
    const err = await expectError(await call("/v1/apps", {
      key, json: { html: "<p>x</p>", manifest: manifest(), input_data: { people: [{ data: { name: "Ok" } }, { data: { nope: 1 } }] } },
    }), 422, "input_schema_violation");
    expect(JSON.stringify(err.details)).toContain("input_data");
    expect(await count("apps")).toBe(before);
  });

  it("starter rows that clash on a unique field leave no app behind", async () => {
    const key = await agentKey();
    const before = await count("apps");
    await expectError(await call("/v1/apps", {
      key, json: { html: "<p>x</p>", manifest: manifest(["email"]), input_data: { people: [{ data: { name: "A", email: "same@x.io" } }, { data: { name: "B", email: " SAME@x.io" } }] } },
    }), 409, "unique_conflict");
    expect(await count("apps")).toBe(before);
  });

  it("an undeclared collection is refused before anything is written", async () => {
    const key = await agentKey();
    const before = await count("apps");
    await expectError(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: manifest(), input_data: { ghosts: [{ data: {} }] } } }), 422, "input_schema_violation");
    expect(await count("apps")).toBe(before);
  });
});

describe("adding unique on redeploy", () => {
  it("is refused with unique_backfill_conflict while live rows share a value, and backfills once they do not", async () => {
    const key = await agentKey();
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: manifest() } }), 201);
    const B = `/v1/apps/${app.app_id}/collections/people`;
    const first = await json<{ row: { key: string } }>(await call(B, { key, json: { data: { name: "A", email: "dup@x.io" } } }), 201);
    await json(await call(B, { key, json: { data: { name: "B", email: "Dup@x.io " } } }), 201);

    const err = await expectError(await call(`/v1/apps/${app.app_id}/versions`, { key, json: { manifest: manifest(["email"]) } }), 409, "unique_backfill_conflict");
    expect(err.details).toMatchObject({ conflicts: [{ collection: "people", field: "email" }] });
    const dry = await call(`/v1/apps/${app.app_id}/versions`, { key, json: { manifest: manifest(["email"]), dry_run: true } });
    expect(dry.status).toBe(409);
    expect((await json<{ current_version: number }>(await call(`/v1/apps/${app.app_id}`, { key }), 200)).current_version).toBe(1);

    await json(await call(`${B}/${first.row.key}`, { method: "PATCH", key, json: { data: { name: "A", email: "a@x.io" } } }), 200);
    await json(await call(`/v1/apps/${app.app_id}/versions`, { key, json: { manifest: manifest(["email"]) } }), 200);
    // The backfilled index now holds: a third row with B's value clashes.
    await expectError(await call(B, { key, json: { data: { name: "C", email: "dup@X.io" } } }), 409, "unique_conflict");
    // And dropping unique again frees the values.
    await json(await call(`/v1/apps/${app.app_id}/versions`, { key, json: { manifest: manifest() } }), 200);
    await json(await call(B, { key, json: { data: { name: "D", email: "dup@x.io" } } }), 201);
  });
});
