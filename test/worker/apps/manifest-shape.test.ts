// A manifest that is not a JSON object (spec B manifest_invalid: "manifest top-level shape
// wrong") is the manifest's own error on every route that takes one: create, redeploy and
// the dry run of each answer 400 manifest_invalid with details.path "" (the manifest as a
// whole), never the body's invalid_request, and nothing changes.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { MANIFEST, deploy, owner, unchanged, type Owner } from "./fixtures";

const NOT_OBJECTS: Array<[string, unknown, string]> = [
  ["an array", [MANIFEST], "an array"],
  ["an empty array", [], "an array"],
  ["a string", "{}", "a string"],
  ["the manifest's own JSON text", JSON.stringify(MANIFEST), "a string"],
  ["a number", 42, "a number"],
  ["null", null, "null"],
  ["true", true, "true"],
];

/** The routes that take a manifest, each as a function of the owner and (for redeploys) an app. */
const ROUTES: Array<[string, (o: Owner, appId: string, manifest: unknown) => Promise<Response>]> = [
  ["POST /v1/apps", (o, _id, manifest) => call("/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest } })],
  ["POST /v1/apps (dry run)", (o, _id, manifest) => call("/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest, dry_run: true } })],
  ["POST /v1/apps/:id/versions", (o, id, manifest) => call(`/v1/apps/${id}/versions`, { key: o.key, json: { manifest } })],
  ["POST /v1/apps/:id/versions (dry run)", (o, id, manifest) => call(`/v1/apps/${id}/versions`, { key: o.key, json: { manifest, dry_run: true } })],
];

describe("a manifest that is not a JSON object → 400 manifest_invalid with its path", () => {
  for (const [route, send] of ROUTES) {
    it(`${route}: an array, a string, a number, null, true`, async () => {
      const o = await owner();
      const created = await deploy(o.key);
      for (const [label, manifest, kind] of NOT_OBJECTS) {
        await unchanged(o, created.app_id, async () => {
          const e = await expectError(await send(o, created.app_id, manifest), 400, "manifest_invalid");
          expect(e.details, label).toEqual({ path: "" });
          expect(e.message, label).toBe(`the manifest must be a JSON object (a JSON Schema 2020-12 document), not ${kind}`);
          expect(e.hint).toContain("/docs/manifest");
        });
      }
    });
  }

  it("a create without a manifest is a body error: 400 invalid_request, manifest is required", async () => {
    const o = await owner();
    await unchanged(o, null, async () => {
      const e = await expectError(await call("/v1/apps", { key: o.key, json: { html: "<p>x</p>" } }), 400, "invalid_request");
      expect(e.message).toBe("manifest is required");
      expect(e.details).toEqual({ field: "manifest", issues: [{ field: "manifest", message: "manifest is required" }] });
    });
  });

  it("a missing field inside the manifest names its path in plain words", async () => {
    const o = await owner();
    const manifest = { ...MANIFEST, "x-service-manifest": { ...(MANIFEST["x-service-manifest"] as object), app: {} } };
    await unchanged(o, null, async () => {
      const e = await expectError(await call("/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest } }), 400, "manifest_invalid");
      expect(e.details).toEqual({ path: "x-service-manifest.app.name" });
      expect(e.message).toBe("x-service-manifest.app.name: is required");
    });
  });
});
