// The screenshot (issue 13 item 8): a real PNG of the requested size whose pixels are the
// brand card of the app's name (background from the name, white lettering), cached in R2
// per version (a hit the second time, a miss after a redeploy), 304 on a matching ETag,
// and refusals of a bad size and another owner's app.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { deploy, manifest, owner } from "../serve/helpers";
import { brandColours } from "../../../src/apps/screenshot";

interface Decoded {
  width: number;
  height: number;
  pixel(x: number, y: number): number[];
}

/** Reads the encoder's PNG back: signature, IHDR, the one IDAT inflated, filter bytes skipped. */
async function decode(bytes: Uint8Array): Promise<Decoded> {
  expect([...bytes.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  let at = 8;
  let width = 0;
  let height = 0;
  const idat: Uint8Array[] = [];
  while (at < bytes.length) {
    const length = view.getUint32(at);
    const type = new TextDecoder().decode(bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      expect([...data.subarray(8, 10)]).toEqual([8, 2]);
    }
    if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  const raw = new Uint8Array(await new Response(new Blob(idat).stream().pipeThrough(new DecompressionStream("deflate"))).arrayBuffer());
  expect(raw.length).toBe((width * 3 + 1) * height);
  return { width, height, pixel: (x, y) => [...raw.subarray(y * (width * 3 + 1) + 1 + x * 3, y * (width * 3 + 1) + 1 + x * 3 + 3)] };
}

describe("screenshot", { timeout: 60_000 }, () => {
  it("answers the brand card as PNG in both sizes, cached per version", async () => {
    const who = await owner();
    const name = `Photo Wall ${Math.random().toString(36).slice(2, 6)}`;
    const app = await deploy(who, { manifest: manifest({ name }) });
    const key = who.agent.api_key;
    const first = await call(`/v1/apps/${app.app_id}/screenshot`, { key });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/png");
    expect(first.headers.get("x-screenshot-cache")).toBe("miss");
    expect(first.headers.get("x-screenshot-kind")).toBe("card");
    const card = await decode(new Uint8Array(await first.arrayBuffer()));
    expect([card.width, card.height]).toEqual([640, 360]);
    expect(card.pixel(0, 0)).toEqual([...brandColours(name).background]);
    let white = 0;
    for (let x = 0; x < card.width; x++) if (card.pixel(x, Math.floor(card.height * 0.45)).every((v) => v === 255)) white += 1;
    expect(white).toBeGreaterThan(20);

    const again = await call(`/v1/apps/${app.app_id}/screenshot?size=card`, { key });
    expect(again.headers.get("x-screenshot-cache")).toBe("hit");
    const etag = again.headers.get("etag")!;
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(new Uint8Array(await (await call(`/v1/apps/${app.app_id}/screenshot`, { key })).arrayBuffer()));
    const unchanged = await call(`/v1/apps/${app.app_id}/screenshot`, { key, headers: { "if-none-match": etag } });
    expect(unchanged.status).toBe(304);

    const og = await decode(new Uint8Array(await (await call(`/v1/apps/${app.app_id}/screenshot?size=og`, { key })).arrayBuffer()));
    expect([og.width, og.height]).toEqual([1200, 630]);

    const renamed = `${name} II`;
    const redeployed = await call(`/v1/apps/${app.app_id}/versions`, { key, json: { html: "<p>v2</p>", manifest: manifest({ name: renamed }) } });
    expect(redeployed.status).toBe(200);
    const fresh = await call(`/v1/apps/${app.app_id}/screenshot`, { key });
    expect(fresh.headers.get("x-screenshot-cache")).toBe("miss");
    expect(fresh.headers.get("etag")).not.toBe(etag);
    expect((await decode(new Uint8Array(await fresh.arrayBuffer()))).pixel(0, 0)).toEqual([...brandColours(renamed).background]);
  });

  it("refuses a bad size and another owner's app", async () => {
    const who = await owner();
    const app = await deploy(who);
    for (const query of ["size=huge", "size=", "width=10"]) {
      await expectError(await call(`/v1/apps/${app.app_id}/screenshot?${query}`, { key: who.agent.api_key }), 400, "invalid_request");
    }
    const stranger = await owner();
    await expectError(await call(`/v1/apps/${app.app_id}/screenshot`, { key: stranger.agent.api_key }), 404, "app_not_found");
  });
});
