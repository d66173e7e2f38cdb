/**
 * The one way the relay fetches a URL someone else chose (webhooks, connections and
 * their oauth2 token URLs, attachment fetches, push endpoints), so that every such fetch
 * gets the same guard and the same bounds (DESIGN §6, WIRE §6.1):
 *
 * 1. the URL as written must pass `refusedTarget` (ssrf.ts);
 * 2. outside development loopback, the host is resolved at send time (DNS over HTTPS,
 *    A and AAAA) and refused when any answer is a non-routable address. Workers cannot
 *    pin the connection to the checked address; in production the runtime itself refuses
 *    private addresses, which closes the gap a rebinding DNS answer would leave;
 * 3. redirects are never followed: a 3xx comes back as it is, for the caller to count as
 *    a failed attempt;
 * 4. one deadline covers resolving, connecting and reading; the body is read up to a cap
 *    and the rest cancelled.
 *
 * `outboundFetch` never throws: every failure is a result whose `error` says why.
 */
import * as z from "zod";
import { joinBytes } from "../bytes";
import { isDevelopmentLoopbackHost, isNonRoutableAddress, refusedTarget, TARGET_REFUSAL } from "./ssrf";

export interface OutboundRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Also keep the body's raw bytes (attachment fetches), as `bytes` on the result. */
  keepBytes?: boolean;
}

export interface OutboundResult {
  /** The HTTP status, or null when no response came (refused, DNS, network, timeout). */
  status: number | null;
  headers: Headers | null;
  /** Up to maxResponseBytes of the response body as text (UTF-8, lossy). */
  body: string;
  /**
   * The body was cut: it went past maxResponseBytes, or it stopped arriving (deadline,
   * broken connection) after the response had come.
   */
  bodyTruncated: boolean;
  /** The body's raw bytes up to maxResponseBytes, when the request asked for keepBytes. */
  bytes?: Uint8Array;
  /** Why the attempt failed before or without a response (refused target, timeout, network); null when a response came. */
  error: string | null;
  durationMs: number;
  /** Retry-After of a 429/503 answer in seconds (both the delta-seconds and HTTP-date forms), else null. */
  retryAfterSeconds: number | null;
}

/** A host's addresses (v4 and v6 text); throws when the host cannot be resolved. */
export type Resolver = (host: string) => Promise<string[]>;

export interface OutboundOptions {
  /** Development mode (CONTRACT §3): loopback targets allowed, and not resolved. */
  development: boolean;
  /** How hosts are resolved; DNS over HTTPS by default. */
  resolve?: Resolver;
  /** How the request is sent; the runtime's fetch by default. */
  fetcher?: typeof fetch;
}

const DOH_ENDPOINT = "https://cloudflare-dns.com/dns-query";
const DOH_TIMEOUT_MS = 5_000;
const DNS_TYPE_A = 1;
const DNS_TYPE_AAAA = 28;

const dohAnswerSchema = z.object({
  Status: z.number(),
  Answer: z.array(z.object({ type: z.number(), data: z.string() })).optional(),
});

/**
 * A resolver that asks Cloudflare's DNS-over-HTTPS JSON API for A and AAAA records
 * (CNAME chains come back already followed). Throws when the host does not exist or
 * has no address.
 */
export function dnsOverHttpsResolver(fetcher: typeof fetch = fetch): Resolver {
  const query = async (host: string, type: "A" | "AAAA"): Promise<string[]> => {
    const url = `${DOH_ENDPOINT}?name=${encodeURIComponent(host)}&type=${type}`;
    const response = await fetcher(url, { headers: { accept: "application/dns-json" }, signal: AbortSignal.timeout(DOH_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`DNS over HTTPS answered ${response.status}`);
    const answer = dohAnswerSchema.parse(await response.json());
    if (answer.Status !== 0) throw new Error(`DNS answered rcode ${answer.Status} for ${host}`);
    return (answer.Answer ?? []).filter((record) => record.type === DNS_TYPE_A || record.type === DNS_TYPE_AAAA).map((record) => record.data);
  };
  return async (host) => {
    const [v4, v6] = await Promise.all([query(host, "A"), query(host, "AAAA")]);
    const addresses = [...v4, ...v6];
    if (addresses.length === 0) throw new Error(`${host} has no A or AAAA record`);
    return addresses;
  };
}

/**
 * Seconds to wait from a Retry-After value: delta-seconds, or an HTTP-date (IMF-fixdate
 * and the two obsolete forms, which all carry a month name and an hh:mm:ss time) counted
 * from `now`, never negative. Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  const text = value?.trim() ?? "";
  if (/^\d+$/.test(text)) return Number(text);
  if (!/[a-z]{3}/i.test(text) || !/\d{1,2}:\d{2}:\d{2}/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Fetches `url` under the outbound guard and bounds; never throws. */
export async function outboundFetch(url: string, request: OutboundRequest, options: OutboundOptions): Promise<OutboundResult> {
  const started = Date.now();
  const failed = (error: string): OutboundResult => ({
    status: null, headers: null, body: "", bodyTruncated: false, error, durationMs: Date.now() - started, retryAfterSeconds: null,
  });

  const refusal = refusedTarget(url, { development: options.development });
  if (refusal !== null) return failed(refusal);

  // A bound that is not a number of milliseconds ahead is no bound: it becomes none at all.
  const timeoutMs = Number.isFinite(request.timeoutMs) ? Math.max(0, Math.floor(request.timeoutMs)) : 0;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const { hostname } = new URL(url);
    if (!(options.development && isDevelopmentLoopbackHost(hostname))) {
      const dnsRefusal = await refusedAddresses(hostname.replace(/\.$/, ""), options.resolve ?? dnsOverHttpsResolver(), deadline);
      if (dnsRefusal !== null) return failed(dnsRefusal);
    }
    const fetcher = options.fetcher ?? fetch;
    const response = await fetcher(url, { method: request.method, headers: request.headers, body: request.body, redirect: "manual", signal: deadline });
    const { text, truncated, bytes } = await readCapped(response, Math.max(0, Math.floor(request.maxResponseBytes)) || 0, deadline, request.keepBytes ?? false);
    const throttled = response.status === 429 || response.status === 503;
    return {
      status: response.status,
      headers: response.headers,
      body: text,
      bodyTruncated: truncated,
      ...(request.keepBytes ? { bytes } : {}),
      error: null,
      durationMs: Date.now() - started,
      retryAfterSeconds: throttled ? parseRetryAfter(response.headers.get("retry-after")) : null,
    };
  } catch (err) {
    if (deadline.aborted) return failed(`timed out after ${timeoutMs} ms`);
    return failed(`the request failed: ${messageOf(err)}`);
  }
}

/**
 * Resolves `host` before the deadline and returns why it is refused (no address, or any
 * non-routable one), or null. A deadline passing is rethrown for the caller to report.
 */
async function refusedAddresses(host: string, resolve: Resolver, deadline: AbortSignal): Promise<string | null> {
  let addresses: string[];
  try {
    addresses = await beforeDeadline(resolve(host), deadline);
  } catch (err) {
    if (deadline.aborted) throw err;
    return `the target's host could not be resolved: ${messageOf(err)}`;
  }
  if (addresses.length === 0) return "the target's host could not be resolved: no address";
  if (addresses.some(isNonRoutableAddress)) return TARGET_REFUSAL.nonRoutableAddress;
  return null;
}

/**
 * Reads the body as UTF-8 up to `maxBytes`, cancelling the rest. Past the cap, or when the
 * body stops arriving before its end, the text so far is kept (a character cut in half
 * at the end is dropped) and flagged truncated.
 */
async function readCapped(response: Response, maxBytes: number, deadline: AbortSignal, keepBytes: boolean): Promise<{ text: string; truncated: boolean; bytes: Uint8Array }> {
  if (response.body === null) return { text: "", truncated: false, bytes: new Uint8Array(0) };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const chunks: Uint8Array[] = [];
  const joined = () => joinBytes(chunks);
  let text = "";
  let kept = 0;
  try {
    for (;;) {
      const { done, value } = await beforeDeadline(reader.read(), deadline);
      if (done) return { text: text + decoder.decode(), truncated: false, bytes: joined() };
      const room = maxBytes - kept;
      const taken = value.byteLength > room ? value.subarray(0, room) : value;
      if (keepBytes) chunks.push(taken);
      text += decoder.decode(taken, { stream: true });
      if (value.byteLength > room) break;
      kept += value.byteLength;
    }
  } catch {
    // The body broke off after the response came: what arrived is kept, flagged truncated.
  }
  await reader.cancel().catch(() => undefined);
  return { text, truncated: true, bytes: joined() };
}


/** `work`, or a rejection with the deadline's reason once the deadline passes first. */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason);
    deadline.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener("abort", onAbort));
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
