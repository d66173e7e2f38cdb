// Attachment references in rows (spec A `service-attachment-id`, spec B
// attachment_ref_not_accessible) on both doors, and app scope dying with the app: purging
// an app frees its app-scoped attachments' bytes while agent-scoped ones stay.
import { describe, expect, it } from "vitest";
import { call, count, expectError, json } from "../helpers";
import { appCall, deploy, ownerToken } from "../serve/helpers";
import { stored, uploaded, uploader } from "./helpers";

const photos = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    Photo: {
      type: "object",
      properties: { caption: { type: "string" }, image: { type: "string", format: "service-attachment-id" }, more: { type: "array", items: { type: "string", format: "service-attachment-id" } } },
      additionalProperties: false,
    },
  },
  "x-service-manifest": {
    app: { name: "Photos" },
    collections: { photos: { schema: { $ref: "#/$defs/Photo" }, read: ["owner", "member"], write: ["owner", "member"], delete: ["owner"] } },
  },
};

describe("service-attachment-id in rows", () => {
  it("accepts the writer's own and the app's attachments, refuses others' and deleted ones, writing nothing", async () => {
    const u = await uploader();
    const stranger = await uploader();
    const app = await deploy(u.owner, { manifest: photos });
    const mine = await uploaded(u.key);
    const appOwned = await uploaded(u.key, undefined, { scope: "app", app_id: app.app_id });
    const theirs = await uploaded(stranger.key);
    const gone = await uploaded(u.key);
    await json(await call(`/v1/attachments/${gone.attachment_id}`, { key: u.key, method: "DELETE" }), 200);
    const rows = `/v1/apps/${app.app_id}/collections/photos`;

    await json(await call(rows, { key: u.key, json: { key: "p1", data: { caption: "mine", image: mine.attachment_id, more: [appOwned.attachment_id] } } }), 201);
    // A caption that merely looks like an id is not a reference.
    await json(await call(rows, { key: u.key, json: { key: "p2", data: { caption: theirs.attachment_id } } }), 201);

    const refused = await expectError(await call(rows, { key: u.key, json: { key: "p3", data: { image: theirs.attachment_id } } }), 422, "attachment_ref_not_accessible");
    expect(refused.details).toEqual({ attachment_ids: [theirs.attachment_id] });
    await expectError(await call(rows, { key: u.key, json: { key: "p4", data: { more: [mine.attachment_id, gone.attachment_id] } } }), 422, "attachment_ref_not_accessible");
    await expectError(await call(`${rows}/p1`, { key: u.key, method: "PATCH", json: { data: { image: theirs.attachment_id } } }), 422, "attachment_ref_not_accessible");
    await expectError(await call(`${rows}/batch`, { key: u.key, json: { rows: [{ key: "p5", data: { image: mine.attachment_id } }, { key: "p6", data: { image: theirs.attachment_id } }] } }), 422, "attachment_ref_not_accessible");
    await expectError(await call(`${rows}/p3`, { key: u.key }), 404, "row_not_found");
    await expectError(await call(`${rows}/p5`, { key: u.key }), 404, "row_not_found");
    expect((await json<{ row: { data: { image: string } } }>(await call(`${rows}/p1`, { key: u.key }), 200)).row.data.image).toBe(mine.attachment_id);

    // The page's door: the owner may reference the app's attachments, not a stranger's.
    const token = await ownerToken(u.owner.human, app.slug);
    await json(await appCall(app.slug, "/_svc/c/photos", { token, json: { key: "w1", data: { image: appOwned.attachment_id } } }), 201);
    await expectError(await appCall(app.slug, "/_svc/c/photos", { token, json: { key: "w2", data: { image: theirs.attachment_id } } }), 422, "attachment_ref_not_accessible");
  });
});

describe("app scope dies with the app", () => {
  it("purging the app deletes its attachments' bytes, rows and tokens; agent-scoped ones stay", async () => {
    const u = await uploader();
    const app = await deploy(u.owner);
    const appOwned = await uploaded(u.key, undefined, { scope: "app", app_id: app.app_id });
    const agentOwned = await uploaded(u.key);
    await json(await call(`/v1/attachments/${appOwned.attachment_id}/tokens`, { key: u.key, method: "POST" }), 201);
    await json(await call(`/v1/apps/${app.app_id}`, { key: u.key, method: "DELETE" }), 200);
    expect(await stored(appOwned.attachment_id)).toBe(true);
    await json(await call(`/v1/apps/${app.app_id}/purge`, { key: u.key, method: "POST" }), 200);
    expect(await stored(appOwned.attachment_id)).toBe(false);
    expect(await count("attachments", "id = ?1", appOwned.attachment_id)).toBe(0);
    expect(await count("attachment_tokens", "attachment_id = ?1", appOwned.attachment_id)).toBe(0);
    await expectError(await call(`/v1/attachments/${appOwned.attachment_id}`, { key: u.key }), 404, "attachment_not_found");
    expect(await stored(agentOwned.attachment_id)).toBe(true);
    expect((await call(`/v1/attachments/${agentOwned.attachment_id}`, { key: u.key })).status).toBe(200);
  });
});
