// Stored originals (WIRE §4.6): a JPEG carrying EXIF with a GPS position, uploaded inline,
// as multipart and through presign → PUT → confirm, is kept and served without any EXIF,
// still decodes at its own size, and its AttachmentRef's size and sha256 are those of the
// served bytes; a photo stored sideways is turned upright; PNG, WebP and AVIF stay in
// their format and size; an SVG is stored as the PNG it rasterises to (a huge declared
// canvas is a bomb, a broken drawing is image_undecodable); a picture that does not decode
// is refused; a GIF loses its comment but keeps its pixels. Every refusal stores nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, dispatch, expectError, json } from "../helpers";
import { imageDimensions } from "../../../src/blobs/dimensions";
import { sniff } from "../../../src/blobs/mime";
import { containsText, GPS_MAKER, jpegSegments, withExifGps } from "../../support/jpeg-exif";
import { holdings, inline, multipart, realPng, sha256, uploaded, uploader, utf8, type Ref } from "./helpers";

const EXIF_APP1 = 0xe1;

/** A decodable 300×200 JPEG made by the Images binding, with an APP1 Exif segment holding a GPS position (and `orientation`) spliced in. */
async function photoWithGps(orientation = 1): Promise<Uint8Array> {
  const result = await env.IMAGES.input(new Blob([await realPng(300, 200)]).stream()).output({ format: "image/jpeg" });
  return withExifGps(new Uint8Array(await result.response().arrayBuffer()), orientation);
}

async function download(key: string, ref: Ref): Promise<Uint8Array> {
  const res = await call(`/v1/attachments/${ref.attachment_id}`, { key });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(ref.mime);
  return new Uint8Array(await res.arrayBuffer());
}

/** The served bytes carry no metadata, decode at `width`×`height`, and are what the ref describes. */
async function expectCleanJpeg(key: string, ref: Ref, width: number, height: number): Promise<void> {
  expect(ref).toMatchObject({ mime: "image/jpeg", width, height, status: "ready" });
  const bytes = await download(key, ref);
  expect(jpegSegments(bytes).filter((segment) => segment.marker === EXIF_APP1)).toEqual([]);
  expect(containsText(bytes, "Exif")).toBe(false);
  expect(containsText(bytes, GPS_MAKER)).toBe(false);
  expect(await env.IMAGES.info(new Blob([bytes]).stream())).toMatchObject({ format: "image/jpeg", width, height });
  expect(ref.size).toBe(bytes.length);
  expect(ref.sha256).toBe(await sha256(bytes));
  const kept = await env.BLOBS.get(`attachments/${ref.attachment_id}`);
  expect(kept?.checksums.sha256 && [...new Uint8Array(kept.checksums.sha256)].map((b) => b.toString(16).padStart(2, "0")).join("")).toBe(ref.sha256);
}

describe("stored originals without metadata", { timeout: 60_000 }, () => {
  it("strips EXIF and GPS from a JPEG on every way in; size and sha256 are the stored bytes'", async () => {
    const u = await uploader();
    const photo = await photoWithGps();
    expect(jpegSegments(photo)[0]).toEqual({ marker: EXIF_APP1, label: "Exif" });
    expect(containsText(photo, GPS_MAKER)).toBe(true);

    const viaInline = await uploaded(u.key, photo, { filename: "beach.jpg" });
    await expectCleanJpeg(u.key, viaInline, 300, 200);
    expect(viaInline.sha256).not.toBe(await sha256(photo));

    const viaForm = await json<Ref>(await multipart(u.key, photo, {}, "image/jpeg", "beach.jpg"), 201);
    await expectCleanJpeg(u.key, viaForm, 300, 200);

    const reserved = await json<{ attachment_id: string; upload_url: string }>(await call("/v1/attachments/presign", {
      key: u.key, json: { mime: "image/jpeg", size: photo.length, sha256: await sha256(photo), filename: "beach.jpg" },
    }), 201);
    const put = await dispatch(new Request(reserved.upload_url, { method: "PUT", body: photo, headers: { "content-type": "image/jpeg", "cf-connecting-ip": "10.9.9.9" } }));
    expect(put.status).toBe(200);
    const confirmed = await json<Ref>(await call(`/v1/attachments/${reserved.attachment_id}/confirm`, { key: u.key, method: "POST" }), 200);
    await expectCleanJpeg(u.key, confirmed, 300, 200);
    expect(await json<Ref>(await call(`/v1/attachments/${reserved.attachment_id}/metadata`, { key: u.key }), 200)).toEqual(confirmed);

    // Thumbnails are made from the clean original.
    const thumbnail = await call(`/v1/attachments/${viaInline.attachment_id}?w=64`, { key: u.key });
    const small = new Uint8Array(await thumbnail.arrayBuffer());
    expect(imageDimensions("image/jpeg", small)).toEqual({ width: 64, height: 43 });
    expect(containsText(small, GPS_MAKER)).toBe(false);
  });

  it("a photo stored sideways (EXIF orientation 6, 3, 8) is kept upright, its tag gone with the rest", async () => {
    const u = await uploader();
    for (const [orientation, width, height] of [[6, 200, 300], [3, 300, 200], [8, 200, 300]]) {
      const ref = await uploaded(u.key, await photoWithGps(orientation));
      await expectCleanJpeg(u.key, ref, width, height);
    }
  });

  it("PNG, WebP and AVIF are re-encoded in their own format at their own size", async () => {
    const u = await uploader();
    const png = await realPng(40, 30);
    for (const format of ["image/png", "image/webp", "image/avif"] as const) {
      const source = format === "image/png" ? png : new Uint8Array(await (await env.IMAGES.input(new Blob([png]).stream()).output({ format })).response().arrayBuffer());
      const ref = await uploaded(u.key, source);
      expect(ref).toMatchObject({ mime: format, width: 40, height: 30 });
      const bytes = await download(u.key, ref);
      // (The local binding's info() does not read AVIF, so the header is read instead.)
      expect({ type: sniff(bytes), ...imageDimensions(format, bytes) }).toEqual({ type: format, width: 40, height: 30 });
      expect(ref).toMatchObject({ size: bytes.length, sha256: await sha256(bytes) });
    }
  });

  it("rasterises an SVG to PNG at the size it declares", async () => {
    const u = await uploader();
    const drawing = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="#c00"/></svg>';
    const plain = await uploaded(u.key, utf8(drawing), { filename: "logo.svg" });
    expect(plain).toMatchObject({ mime: "image/png", width: 40, height: 30, filename: "logo.svg" });
    const png = await download(u.key, plain);
    expect(imageDimensions("image/png", png)).toEqual({ width: 40, height: 30 });
    expect(plain).toMatchObject({ size: png.length, sha256: await sha256(png) });

    const withProlog = `<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 32"><circle cx="16" cy="16" r="16"/></svg>`;
    expect(await uploaded(u.key, utf8(withProlog), { mime: "image/svg+xml" })).toMatchObject({ mime: "image/png", width: 64, height: 32 });
    const form = await json<Ref>(await multipart(u.key, utf8(drawing), {}, "image/svg+xml", "logo.svg"), 201);
    expect(form).toMatchObject({ mime: "image/png", width: 40, height: 30 });
  });

  it("refuses SVG bombs, broken drawings and pictures that do not decode, storing nothing", async () => {
    const u = await uploader();
    const before = await holdings(u.agent.agent_id);
    const huge = '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>';
    await expectError(await inline(u.key, utf8(huge), { mime: "image/svg+xml" }), 413, "attachment_expansion_exceeded");
    const hugeBox = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 90000 90000"/>';
    await expectError(await inline(u.key, utf8(hugeBox), { filename: "big.svg" }), 413, "attachment_expansion_exceeded");
    const entities = '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">]><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><text>&a;</text></svg>';
    await expectError(await inline(u.key, utf8(entities), { mime: "image/svg+xml" }), 415, "mime_mismatch");
    const broken = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"';
    await expectError(await inline(u.key, utf8(broken), { mime: "image/svg+xml" }), 422, "image_undecodable");
    const photo = await photoWithGps();
    await expectError(await inline(u.key, photo.slice(0, 400)), 422, "image_undecodable");
    await expectError(await multipart(u.key, photo.slice(0, 400), {}, "image/jpeg", "cut.jpg"), 422, "image_undecodable");
    expect(await holdings(u.agent.agent_id)).toBe(before);
  });

  it("a GIF keeps its pixels and loses its comment", async () => {
    const u = await uploader();
    // A 1×1 GIF89a with a global colour table, a comment extension, and one image.
    const header = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
    const comment = [0x21, 0xfe, ...[GPS_MAKER.length], ...utf8(GPS_MAKER), 0];
    const image = [0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0, 0x3b];
    const gif = Uint8Array.from([...header, ...comment, ...image]);
    const ref = await uploaded(u.key, gif);
    expect(ref).toMatchObject({ mime: "image/gif", width: 1, height: 1, size: gif.length - comment.length });
    const bytes = await download(u.key, ref);
    expect(bytes).toEqual(Uint8Array.from([...header, ...image]));
    expect(containsText(bytes, GPS_MAKER)).toBe(false);
  });
});
