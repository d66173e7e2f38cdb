// Shared helpers for the attachment tests: files of known types built in memory (a real
// 1×1 PNG, a PNG header declaring a huge canvas, small zips with honest and lying
// central directories), the form the relay stores a picture in, uploads through each
// door, and counting what an agent holds.
import { env } from "cloudflare:test";
import { call, callWith, count, json, type Registered } from "../helpers";
import { owner, PNG_BASE64, type Owner } from "../serve/helpers";
import { joinBytes } from "../../../src/bytes";

export type Ref = {
  attachment_id: string; scope: string; mime: string; size: number; sha256: string; url: string; width: number | null; height: number | null;
  filename: string | null; status: string; app_id: string | null; created_at: string; confirmed_at: string | null; deleted_at: string | null;
};

export const PNG = Uint8Array.from(atob(PNG_BASE64), (ch) => ch.charCodeAt(0));

/**
 * The bytes the relay keeps and serves for an uploaded PNG or JPEG (WIRE §4.6): the Images
 * binding's re-encoding of it in the same format, without metadata. Re-encoding is
 * deterministic, so a download equals this byte for byte.
 */
export async function storedForm(bytes: Uint8Array, format: "image/png" | "image/jpeg" = "image/png"): Promise<Uint8Array> {
  const result = await env.IMAGES.input(new Blob([bytes]).stream()).output({ format });
  return new Uint8Array(await result.response().arrayBuffer());
}

export function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A PNG signature and IHDR declaring `width`×`height` (nothing after: the header is all a bomb check reads). */
export function pngHeader(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, 0], 24);
  return bytes;
}

/** A one-entry stored zip whose central directory claims `claimedSize` uncompressed bytes. */
export function zipOf(content: Uint8Array, claimedSize = content.length): Uint8Array {
  const name = utf8("a.txt");
  const local = new Uint8Array(30 + name.length + content.length);
  const lv = new DataView(local.buffer);
  lv.setUint32(0, 0x04034b50, true);
  lv.setUint16(4, 20, true);
  lv.setUint32(18, content.length, true);
  lv.setUint32(22, claimedSize, true);
  lv.setUint16(26, name.length, true);
  local.set(name, 30);
  local.set(content, 30 + name.length);
  const central = new Uint8Array(46 + name.length);
  const cv = new DataView(central.buffer);
  cv.setUint32(0, 0x02014b50, true);
  cv.setUint16(4, 20, true);
  cv.setUint16(6, 20, true);
  cv.setUint32(20, content.length, true);
  cv.setUint32(24, claimedSize, true);
  cv.setUint16(28, name.length, true);
  central.set(name, 46);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, 1, true);
  ev.setUint16(10, 1, true);
  ev.setUint32(12, central.length, true);
  ev.setUint32(16, local.length, true);
  const out = new Uint8Array(local.length + central.length + end.length);
  out.set(local, 0);
  out.set(central, local.length);
  out.set(end, local.length + central.length);
  return out;
}

export interface Uploading {
  owner: Owner;
  key: string;
  agent: Registered;
}

export async function uploader(): Promise<Uploading> {
  const o = await owner();
  return { owner: o, key: o.agent.api_key, agent: o.agent };
}

export function inline(key: string, bytes: Uint8Array, extra: Record<string, unknown> = {}, overrides?: Record<string, unknown>): Promise<Response> {
  const opts = { key, json: { content_base64: toBase64(bytes), ...extra } };
  return overrides ? callWith(overrides, "/v1/attachments", opts) : call("/v1/attachments", opts);
}

export function multipart(key: string, bytes: Uint8Array, fields: Record<string, string> = {}, type = "application/octet-stream", name = "file.bin"): Promise<Response> {
  const form = new FormData();
  form.set("file", new File([bytes], name, { type }));
  for (const [field, value] of Object.entries(fields)) form.set(field, value);
  return call("/v1/attachments", { key, body: form });
}

export async function uploaded(key: string, bytes: Uint8Array = PNG, extra: Record<string, unknown> = {}): Promise<Ref> {
  return json<Ref>(await inline(key, bytes, extra), 201);
}

/** Attachment rows the agent holds, to prove a refusal changed nothing. */
export function holdings(agentId: string): Promise<number> {
  return count("attachments", "owner_agent_id = ?1", agentId);
}

/** Whether R2 still holds the attachment's bytes. */
export async function stored(id: string): Promise<boolean> {
  return (await env.BLOBS.head(`attachments/${id}`)) !== null;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(utf8(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** A real, decodable RGB PNG of `width`×`height` (a horizontal gradient). */
export async function realPng(width: number, height: number): Promise<Uint8Array> {
  const raw = new Uint8Array((width * 3 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x += 1) raw.set([(x * 255) / width, (y * 255) / height, 128], row + 1 + x * 3);
  }
  const deflated = new Uint8Array(await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflated), chunk("IEND", new Uint8Array(0))];
  return joinBytes(parts);
}
