/**
 * Reading a JSON request body safely: the size cap is enforced — a declared
 * Content-Length over it is refused before reading, a body within it is read in one call
 * (the runtime holds the body to its declared length, and the size is checked again), and
 * a body without one is refused while streaming, as soon as it passes the cap — the media
 * type must be JSON, and malformed JSON becomes `invalid_request` instead of an exception;
 * so does JSON holding text the relay could not keep (text-safety.ts).
 */
import { RelayError } from "../errors";
import { config } from "../config";
import type { AppContext } from "./types";
import { refuseUnsafeJsonText } from "./text-safety";

/** Decodes strictly: a body that is not UTF-8 is refused, not mangled. Stateless between calls (no `stream` option). */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** A body of unknown length (chunked), read until `limit` and refused past it. */
async function readCapped(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new RelayError("payload_too_large", `The body is over ${limit} bytes.`, { limit });
    }
    chunks.push(value);
  }
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}

/** The body's bytes, refused (`payload_too_large`) past `limit` bytes. */
export async function readBodyBytes(c: AppContext, limit: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw new RelayError("payload_too_large", `The body is ${declared} bytes; this route takes at most ${limit}.`, { limit });
  }
  const raw = c.req.raw;
  if (!raw.body) return new Uint8Array(0);
  if (Number.isFinite(declared)) {
    // The runtime holds a body to its declared length: read it in one native call.
    const bytes = new Uint8Array(await raw.arrayBuffer());
    if (bytes.byteLength > limit) throw new RelayError("payload_too_large", `The body is over ${limit} bytes.`, { limit });
    return bytes;
  }
  return readCapped(raw.body, limit);
}

/** Decodes UTF-8 strictly; `invalid_request` for bytes that are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new RelayError("invalid_request", "The body is not valid UTF-8.", { field: "body" });
  }
}

export async function readBodyText(c: AppContext, limit: number): Promise<string> {
  return decodeUtf8(await readBodyBytes(c, limit));
}

/** Returns the parsed JSON, or undefined for an empty body when `optional`. */
export async function readJsonBody(c: AppContext, optional: boolean, limit = config(c.env).maxJsonBodyBytes): Promise<unknown> {
  const text = await readBodyText(c, limit);
  if (text.trim() === "") {
    if (optional) return undefined;
    throw new RelayError("invalid_request", "This route needs a JSON body.", { field: "body" });
  }
  const type = c.req.header("content-type");
  if (type && !/^application\/(.+\+)?json\b/i.test(type)) {
    throw new RelayError("invalid_request", `Send the body as application/json, not ${type}.`, { field: "content-type" });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new RelayError("invalid_request", `The body is not valid JSON: ${(err as Error).message}`, { field: "body" });
  }
  refuseUnsafeJsonText(text, parsed);
  return parsed;
}
