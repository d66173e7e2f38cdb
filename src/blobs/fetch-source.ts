/**
 * `POST /v1/attachments/fetch` (WIRE §2.9): the relay downloads a URL someone gave it and
 * runs the upload pipeline on the bytes. The download goes through the one outbound
 * guard (src/effects/outbound-fetch.ts: https public hosts only, loopback only in
 * development, resolved addresses checked, no redirects, one deadline), capped at the
 * largest attachment size; anything but a complete 2xx body is `attachment_fetch_failed`.
 */
import { config } from "../config";
import { RelayError } from "../errors";
import { outboundFetch } from "../effects/outbound-fetch";
import { largestFileCap } from "./attachments";

export const FETCH_TIMEOUT_MS = 30_000;

function failed(reason: string, status: number | null = null): RelayError {
  return new RelayError("attachment_fetch_failed", `The source could not be fetched: ${reason}.`, { reason, status });
}

function lastSegment(url: string): string | null {
  const path = new URL(url).pathname;
  const segment = path.slice(path.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(segment) || null;
  } catch {
    return segment || null;
  }
}

/** The bytes at `sourceUrl`, and the type the source declared. */
export async function fetchSource(env: Env, sourceUrl: string): Promise<{ bytes: Uint8Array; declaredMime: string | null; filename: string | null }> {
  const cap = largestFileCap(env);
  const result = await outboundFetch(sourceUrl, { method: "GET", headers: { accept: "*/*" }, timeoutMs: FETCH_TIMEOUT_MS, maxResponseBytes: cap, keepBytes: true }, { development: config(env).development });
  if (result.error !== null) throw failed(result.error);
  if (result.status === null || result.status < 200 || result.status > 299) throw failed(`the source answered ${result.status}`, result.status);
  if (result.bodyTruncated) {
    if ((result.bytes?.length ?? 0) >= cap) throw new RelayError("attachment_size_exceeded", `The source is over ${cap} bytes.`, { limit: cap });
    throw failed("the body stopped before its end", result.status);
  }
  return { bytes: result.bytes ?? new Uint8Array(0), declaredMime: null, filename: lastSegment(sourceUrl) };
}
