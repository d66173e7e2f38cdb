// Deploy assets given as `{ path, attachment_id }` (WIRE §2.2): an attachment the deploying
// agent may use (its own agent-scoped one, or one scoped to this app) is served at its path
// on the app origin with the hardened asset headers and single-range 206; its bytes are
// copied at deploy, so deleting the attachment afterwards changes nothing served. Unknown,
// foreign and other-app attachments and bad paths are refused with their catalogue code
// and nothing is deployed.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { MANIFEST, deploy, owner, redeploy, unchanged, versionRecord, type Owner } from "../apps/fixtures";
import { appCall } from "../serve/helpers";
import { realPng, sha256, stored, storedForm, uploaded } from "./helpers";

async function bytesOf(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

function create(o: Owner, assets: unknown[]) {
  return call("/v1/apps", { key: o.key, json: { html: "<p>gallery</p>", manifest: MANIFEST, visibility: "public", assets } });
}

describe("deploy with attachment assets", () => {
  it("serves an agent-scoped attachment at its path with asset headers and Range 206, and keeps serving it after the attachment is deleted", async () => {
    const o = await owner();
    // The attachment keeps the PNG re-encoded without metadata; that is what the asset copies.
    const picture = await storedForm(await realPng(40, 30));
    const ref = await uploaded(o.key, picture);
    const created = await deploy(o.key, { manifest: MANIFEST, visibility: "public", assets: [{ path: "img/pic.png", attachment_id: ref.attachment_id }] });

    const record = await versionRecord(created.app_id, 1);
    expect(record.assets).toEqual([{ path: "img/pic.png", sha256: await sha256(picture), size: picture.byteLength, mime: "image/png", attachment_id: ref.attachment_id }]);

    const whole = await appCall(created.slug, "/img/pic.png");
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(whole.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(await bytesOf(whole)).toEqual(picture);

    const part = await appCall(created.slug, "/img/pic.png", { headers: { range: "bytes=8-23" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 8-23/${picture.byteLength}`);
    expect(await bytesOf(part)).toEqual(picture.slice(8, 24));
    const beyond = await appCall(created.slug, "/img/pic.png", { headers: { range: `bytes=${picture.byteLength + 5}-` } });
    expect(beyond.status).toBe(416);
    await beyond.arrayBuffer();

    expect((await call(`/v1/attachments/${ref.attachment_id}`, { key: o.key, method: "DELETE" })).status).toBeLessThan(300);
    const after = await appCall(created.slug, "/img/pic.png");
    expect(after.status).toBe(200);
    expect(await bytesOf(after)).toEqual(picture);
  });

  it("a redeploy takes an attachment scoped to this app", async () => {
    const o = await owner();
    const created = await deploy(o.key, { manifest: MANIFEST, visibility: "public" });
    const picture = await storedForm(await realPng(12, 12));
    const ref = await uploaded(o.key, picture, { scope: "app", app_id: created.app_id });
    const next = await redeploy(o.key, created.app_id, { assets: [{ path: "a/b.png", attachment_id: ref.attachment_id }] });
    expect(next.version).toBe(2);
    const res = await appCall(created.slug, "/a/b.png");
    expect(res.status).toBe(200);
    expect(await bytesOf(res)).toEqual(picture);
  });
});

describe("deploy with attachment assets: refusals change nothing", () => {
  it("an unknown id is attachment_not_found", async () => {
    const o = await owner();
    await unchanged(o, null, async () => {
      const e = await expectError(await create(o, [{ path: "x.png", attachment_id: "att_doesnotexist000" }]), 404, "attachment_not_found");
      expect(e.details).toEqual({ field: "assets.0.attachment_id" });
    });
  });

  it("another owner's attachment is attachment_not_found", async () => {
    const o = await owner();
    const stranger = await owner();
    const ref = await uploaded(stranger.key, await realPng(5, 5));
    await unchanged(o, null, async () => {
      await expectError(await create(o, [{ path: "x.png", attachment_id: ref.attachment_id }]), 404, "attachment_not_found");
    });
  });

  it("an attachment scoped to another app of the same owner is attachment_not_found", async () => {
    const o = await owner();
    const other = await deploy(o.key, { manifest: MANIFEST });
    const target = await deploy(o.key, { manifest: MANIFEST });
    const ref = await uploaded(o.key, await realPng(6, 6), { scope: "app", app_id: other.app_id });
    await unchanged(o, target.app_id, async () => {
      const res = await call(`/v1/apps/${target.app_id}/versions`, { key: o.key, json: { assets: [{ path: "x.png", attachment_id: ref.attachment_id }] } });
      await expectError(res, 404, "attachment_not_found");
    });
  });

  it.each([["../x.png"], ["/abs.png"], ["_svc/x.png"], ["pic.svg"]])("a bad path %s is invalid_request", async (path) => {
    const o = await owner();
    const ref = await uploaded(o.key, await realPng(4, 4));
    await unchanged(o, null, async () => {
      await expectError(await create(o, [{ path, attachment_id: ref.attachment_id }]), 400, "invalid_request");
    });
  });
});

it("the uploaded attachment is untouched by a refused deploy", async () => {
  const o = await owner();
  const ref = await uploaded(o.key, await realPng(3, 3));
  await expectError(await create(o, [{ path: "ok.png", attachment_id: ref.attachment_id }, { path: "bad.js", content_base64: "eA==" }]), 400, "invalid_request");
  expect(await stored(ref.attachment_id)).toBe(true);
  const download = await call(`/v1/attachments/${ref.attachment_id}`, { key: o.key });
  expect(download.status).toBe(200);
  await download.arrayBuffer();
});
