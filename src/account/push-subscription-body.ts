/**
 * The body that saves a browser push subscription (what `PushSubscription.toJSON()`
 * gives a page), shared by the two doors that take one: `POST /v1/self/push-subscriptions`
 * on the API origin and `POST /_svc/push/subscriptions` on an app origin (the page
 * script's `push.enable()`). Both check the endpoint with the same outbound rules the
 * relay applies when it later POSTs there.
 */
import * as z from "zod";
import { config } from "../config";
import { RelayError } from "../errors";
import { refusedTarget } from "../effects/ssrf";
import { base64urlBytes } from "./vapid";
import type { SubscriptionInput } from "./push";

/** The full outbound rules (SSRF guard, https outside development) are applied by subscriptionInput, where the mode is known. */
const endpoint = z.string().max(2048);
const p256dh = z.string().max(200).refine((s) => {
  const bytes = base64urlBytes(s);
  return bytes !== null && bytes.byteLength === 65 && bytes[0] === 4;
}, "must be the base64url uncompressed P-256 point (65 bytes)");
const auth = z.string().max(100).refine((s) => base64urlBytes(s)?.byteLength === 16, "must be 16 bytes in base64url");

export const subscriptionBody = z.strictObject({
  endpoint, expirationTime: z.number().int().min(0).nullable().optional(),
  keys: z.strictObject({ p256dh, auth }),
});

/** The body naming the subscription to delete. */
export const endpointBody = z.strictObject({ endpoint: z.string().max(2048).optional() });

/** A checked body as the store takes it; `invalid_request` when the relay would refuse to POST to the endpoint. */
export function subscriptionInput(env: Env, body: z.infer<typeof subscriptionBody>): SubscriptionInput {
  // A push service the relay will POST to: the same rules as every outbound target (CONTRACT §3: loopback http in development).
  const refusal = refusedTarget(body.endpoint, { development: config(env).development });
  if (refusal) throw new RelayError("invalid_request", `endpoint: ${refusal}.`, { field: "endpoint" });
  return {
    endpoint: body.endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth,
    expiresAt: typeof body.expirationTime === "number" ? new Date(body.expirationTime).toISOString() : null,
  };
}

/** The endpoint a delete names, or `invalid_request`. */
export function namedEndpoint(endpoint: string | undefined): string {
  if (!endpoint) throw new RelayError("invalid_request", "Name the subscription's endpoint (?endpoint= or { endpoint }).", { field: "endpoint" });
  return endpoint;
}
