// Thumbnails (WIRE §4.6) through the Images binding: ?w= snaps up to a listed width, the
// variant is kept in R2 and served from there the next time, a width at or above the
// source's or above 2048 serves the original, a non-raster type serves the original, a
// bad w is invalid_request, the same works on /b/<token> and /_svc/attachments/<id>, and
// deleting the source deletes its variants. Prints first-hit and cached latency.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { appCall, deploy } from "../serve/helpers";
import { imageDimensions } from "../../../src/blobs/dimensions";
import { realPng, storedForm, uploaded, uploader, utf8 } from "./helpers";

async function variant(res: Response): Promise<{ width: number; height: number; type: string | null; bytes: Uint8Array }> {
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = res.headers.get("content-type");
  return { ...imageDimensions(type ?? "", bytes)!, type, bytes };
}

describe("?w= thumbnails", { timeout: 60_000 }, () => {
  it("snaps, caches, falls back to the original, and goes with the source", async () => {
    const u = await uploader();
    const source = await realPng(300, 200);
    const ref = await uploaded(u.key, source);
    expect(ref).toMatchObject({ width: 300, height: 200, mime: "image/png" });
    const path = `/v1/attachments/${ref.attachment_id}`;

    let started = Date.now();
    const first = await variant(await call(`${path}?w=100`, { key: u.key }));
    const firstMs = Date.now() - started;
    expect(first).toMatchObject({ width: 128, height: 85, type: "image/png" });
    expect(await env.BLOBS.head(`attachments/${ref.attachment_id}/w128`)).not.toBeNull();
    started = Date.now();
    const again = await variant(await call(`${path}?w=128`, { key: u.key }));
    const cachedMs = Date.now() - started;
    expect(again.bytes).toEqual(first.bytes);
    console.log(`thumbnail 300x200 → w128: first hit ${firstMs} ms, cached ${cachedMs} ms`);

    expect((await variant(await call(`${path}?w=256`, { key: u.key }))).width).toBe(256);
    // The original served is the stored one: the PNG re-encoded without metadata.
    const kept = await storedForm(source);
    for (const w of ["300", "512", "5000"]) {
      const original = await call(`${path}?w=${w}`, { key: u.key });
      expect(new Uint8Array(await original.arrayBuffer())).toEqual(kept);
    }
    await expectError(await call(`${path}?w=abc`, { key: u.key }), 400, "invalid_request");
    await expectError(await call(`${path}?w=0`, { key: u.key }), 400, "invalid_request");

    const token = await json<{ url: string }>(await call(`${path}/tokens`, { key: u.key, method: "POST" }), 201);
    expect((await variant(await call(`${new URL(token.url).pathname}?w=64`))).width).toBe(64);

    await json(await call(path, { key: u.key, method: "DELETE" }), 200);
    const left = await env.BLOBS.list({ prefix: `attachments/${ref.attachment_id}` });
    expect(left.objects).toEqual([]);
  });

  it("non-raster files serve as they are; app pages get thumbnails too", async () => {
    const u = await uploader();
    const text = await uploaded(u.key, utf8("not an image"));
    expect(await (await call(`/v1/attachments/${text.attachment_id}?w=64`, { key: u.key })).text()).toBe("not an image");
    const app = await deploy(u.owner);
    const photo = await uploaded(u.key, await realPng(200, 100), { scope: "app", app_id: app.app_id });
    expect(await variant(await appCall(app.slug, `/_svc/attachments/${photo.attachment_id}?w=64`))).toMatchObject({ width: 64, height: 32 });
  });
});
