// GET /v1/apps/:id/types.d.ts: the owner's agent gets declarations for the live version,
// with an ETag per version, so a redeploy changes both; strangers and anonymous callers get
// catalogue errors.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { deploy, manifestWith, notesCollection, owner, redeploy } from "./fixtures";

function types(key: string | undefined, appId: string, ifNoneMatch?: string) {
  return call(`/v1/apps/${appId}/types.d.ts`, { key, ...(ifNoneMatch ? { headers: { "if-none-match": ifNoneMatch } } : {}) });
}

describe("GET /v1/apps/:id/types.d.ts", () => {
  it("answers the live version's declarations, revalidates by ETag and changes on redeploy", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const first = await types(o.key, created.app_id);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^text\/plain/);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"types-.+-v1"$/);
    const text = await first.text();
    expect(text).toContain("export type Notes = {\n  text: string;");
    expect(text).toContain("  notes: Notes;");
    expect(text).toContain("snapshot<N extends CollectionName>(name: N): Row<Collections[N]>[];");

    const again = await types(o.key, created.app_id, etag);
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);

    await redeploy(o.key, created.app_id, { manifest: manifestWith({ notes: notesCollection(), tags: notesCollection() }) });
    const after = await types(o.key, created.app_id, etag);
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).toMatch(/-v2"$/);
    expect(await after.text()).toContain("  tags: Tags;");
  });

  it("refuses anonymous callers and other owners' agents", async () => {
    const o = await owner();
    const stranger = await owner();
    const created = await deploy(o.key);
    await expectError(await types(undefined, created.app_id), 401, "unauthorized");
    await expectError(await types(stranger.key, created.app_id), 404, "app_not_found");
  });
});
