/**
 * Reading a JSON request body safely: the size cap is enforced while streaming (a lying
 * or missing Content-Length cannot get past it), the media type must be JSON, and
 * malformed JSON becomes `invalid_request` instead of an exception.
 */
import { RelayError } from "../errors";
import { config } from "../config";
import type { AppContext } from "./types";

export async function readBodyText(c: AppContext, limit: number): Promise<string> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw new RelayError("payload_too_large", `The body is ${declared} bytes; this route takes at most ${limit}.`, { limit });
  }
  const stream = c.req.raw.body;
  if (!stream) return "";
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
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(joined);
  } catch {
    throw new RelayError("invalid_request", "The body is not valid UTF-8.", { field: "body" });
  }
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
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RelayError("invalid_request", `The body is not valid JSON: ${(err as Error).message}`, { field: "body" });
  }
}
