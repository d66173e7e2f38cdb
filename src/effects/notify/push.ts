/**
 * The push channel's sending half (WIRE §5.5 notify `channels: ["push"]`): one Web Push
 * message to one saved browser subscription, encrypted for that browser (RFC 8291
 * `aes128gcm`) and signed with the relay's VAPID key (RFC 8292, src/account/vapid.ts),
 * both done by @block65/webcrypto-web-push. The notification engine decides who gets
 * what; this file only builds, sends and reads the push service's answer.
 *
 * - The payload is JSON `{ title, body, link }` (plus `tag` when the caller names one,
 *   which the service worker uses to replace an earlier notification on the same topic).
 *   WIRE §5.5: it carries no row data, only the app's name, a line naming the collection
 *   and the rule's static same-origin `link`; the caller writes `title` and `body` so.
 * - Headers: `TTL` one day (a push service keeps the message that long for a device that
 *   is offline), `Urgency: normal`, and with a `tag` a `Topic` (a hash of it: the push
 *   service then keeps only the newest pending message of that topic).
 * - The VAPID token's `aud` is the endpoint's origin and its `sub` is `mailto:` + the
 *   MAIL_FROM setting; the library makes it valid for 12 hours.
 * - Endpoints go through the outbound guard like every URL someone else chose (DESIGN
 *   §6, ../ssrf.ts and ../outbound-fetch.ts): public https only, the host resolved and
 *   refused when it leads to a non-routable address, no redirect followed (a 3xx is a
 *   failure), 15 seconds per attempt. In development mode (CONTRACT §3) a loopback
 *   endpoint (`127.0.0.1`, `localhost`, `[::1]`) may be plain http. The library refuses
 *   to build a request for anything but https, so for such an endpoint the request is
 *   built for the https form of the same URL (the token's `aud` is that https origin)
 *   and then sent to the http address as given.
 * - Answers: 2xx is `sent`; 404 and 410 mean the browser dropped the subscription
 *   (`gone`: the caller deletes it with deleteGoneSubscription); anything else, a refused
 *   endpoint, a missing VAPID key or no answer at all is `failed`, with the push
 *   service's `Retry-After` in seconds when it gave one (429 and 503 do).
 */
import { buildPushPayload } from "@block65/webcrypto-web-push";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { b64urlEncode, signingKeys, vapidKeys } from "../../account/vapid";
import { outboundFetch, parseRetryAfter } from "../outbound-fetch";
import { refusedTarget } from "../ssrf";

export { deleteGoneSubscription } from "../../account/push";

export interface PushTarget {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface PushMessage {
  title: string;
  body: string;
  link: string | null;
  tag?: string;
}

export type PushOutcome =
  | { kind: "sent"; status: number }
  | { kind: "gone"; status: 404 | 410 }
  /** `retryable`: it may pass later (no answer, or a 5xx or 429); a request that could not even be built never will. */
  | { kind: "failed"; status: number | null; error: string; retryAfterSeconds: number | null; retryable: boolean };

/** How long a push service keeps an undelivered message for a device that is offline. */
export const PUSH_TTL_SECONDS = 86_400;

/** How long one attempt may take before it counts as failed. */
export const PUSH_TIMEOUT_MS = 15_000;

/** The `Topic` header for a tag: at most 32 characters of the base64url alphabet (RFC 8030 §5.4), so a hash. */
async function topicOf(tag: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tag)));
  return b64urlEncode(digest).slice(0, 32);
}

/**
 * The URL the library builds the request for: the endpoint itself, or in development its
 * https form when it is a plain-http loopback address. Throws `invalid_request` for an
 * endpoint the outbound guard refuses.
 */
function buildableEndpoint(env: Env, endpoint: string): URL {
  const refusal = refusedTarget(endpoint, { development: config(env).development });
  if (refusal !== null) throw new RelayError("invalid_request", `The push endpoint is refused: ${refusal}.`, { field: "endpoint" });
  const url = new URL(endpoint);
  if (url.protocol === "http:") url.protocol = "https:";
  return url;
}

/** Builds the encrypted request (VAPID + aes128gcm, TTL, Urgency) for one subscription. */
export async function buildPushRequest(env: Env, target: PushTarget, message: PushMessage): Promise<Request> {
  const buildFor = buildableEndpoint(env, target.endpoint);
  const keys = await vapidKeys(env);
  if (typeof keys === "string") {
    throw new RelayError("not_implemented", "Browser push is not configured on this relay: the operator must set the VAPID_PRIVATE_KEY secret.", { reason: keys });
  }
  const data = { title: message.title, body: message.body, link: message.link, ...(message.tag !== undefined ? { tag: message.tag } : {}) };
  const options = { ttl: PUSH_TTL_SECONDS, urgency: "normal" as const, ...(message.tag !== undefined ? { topic: await topicOf(message.tag) } : {}) };
  const built = await buildPushPayload(
    { data, options },
    { endpoint: buildFor.href, expirationTime: null, keys: target.keys },
    signingKeys(keys, `mailto:${config(env).mailFrom}`),
  );
  return new Request(target.endpoint, { method: "POST", headers: built.headers, body: built.body, redirect: "manual" });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The default way a push goes out: through the outbound guard. The guard's request body
 * is text, so the encrypted bytes ride in the fetch it makes once the target has passed.
 * No answer at all is thrown, as a fetch would.
 */
async function guardedSend(env: Env, request: Request): Promise<Response> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const result = await outboundFetch(
    request.url,
    { method: "POST", headers: Object.fromEntries(request.headers), timeoutMs: PUSH_TIMEOUT_MS, maxResponseBytes: 1024 },
    { development: config(env).development, fetcher: (url, init) => fetch(url, { ...init, body: bytes }) },
  );
  if (result.status === null) throw new Error(result.error ?? "no answer");
  return new Response(null, { status: result.status, headers: result.headers ?? undefined });
}

/** Sends it; a 404/410 answer means the subscription is gone (the caller deletes it). */
export async function sendPush(env: Env, target: PushTarget, message: PushMessage, send?: (request: Request) => Promise<Response>): Promise<PushOutcome> {
  let request: Request;
  try {
    request = await buildPushRequest(env, target, message);
  } catch (err) {
    return { kind: "failed", status: null, error: errorText(err), retryAfterSeconds: null, retryable: false };
  }
  let response: Response;
  try {
    response = await (send ? send(request) : guardedSend(env, request));
  } catch (err) {
    return { kind: "failed", status: null, error: `the push service could not be reached: ${errorText(err)}`, retryAfterSeconds: null, retryable: true };
  }
  await response.body?.cancel();
  const status = response.status;
  if (status >= 200 && status < 300) return { kind: "sent", status };
  if (status === 404 || status === 410) return { kind: "gone", status };
  return {
    kind: "failed", status, error: `the push service answered ${status}`,
    retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after")), retryable: status >= 500 || status === 429,
  };
}
