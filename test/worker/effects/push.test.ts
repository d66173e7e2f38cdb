// The push channel's sending half (src/effects/notify/push.ts) in workerd, checked the
// way a push service and a browser would check it. The test plays the browser: it makes
// a real P-256 subscription key pair and auth secret with WebCrypto and saves the
// subscription through /v1/self/push-subscriptions. It plays the push service too: the
// Worker cannot listen on a socket, so the request sendPush builds is handed to a
// receiver here through sendPush's `send` parameter (the bytes are the real ones a push
// service would get). The receiver verifies the VAPID token (ES256 with the relay's
// public key as /v1 serves it, `aud` the endpoint's origin, `sub` mailto: MAIL_FROM,
// `exp` within 24 h) and decrypts the aes128gcm body with the subscription's private key,
// written here from RFC 8291 and RFC 8188 rather than taken from the library (both sides
// live in push-service.ts). Then the answers: 404 and 410 are `gone` (and the row can be deleted), 500 and a 3xx
// are failures, 429/503 carry Retry-After; production refuses (through the outbound
// guard) non-https and private endpoints, and a missing VAPID key; development sends a
// plain-http loopback endpoint, and the default send really goes out to loopback.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signIn } from "../helpers";
import { config } from "../../../src/config";
import { buildPushRequest, deleteGoneSubscription, sendPush, type PushMessage } from "../../../src/effects/notify/push";
import { b64url, browser, pushService, relayPublicKey, rowFor, saved } from "./push-service";

const MESSAGE: PushMessage = { title: "Trip planner", body: "New entry in todos", link: "/todos" };

/** A send that must never be reached. */
async function unreachable(request: Request): Promise<Response> {
  throw new Error(`nothing should have been sent to ${request.url}`);
}

describe("sendPush: what a push service and the browser receive", () => {
  it("delivers a VAPID-signed aes128gcm request that the subscription's own key decrypts to { title, body, link }", async () => {
    const human = await signIn();
    const publicKey = await relayPublicKey(human);
    const who = await browser();
    await saved(human, who);
    const service = pushService(who, publicKey);
    const before = Math.floor(Date.now() / 1000);

    expect(await sendPush(env, who.target, MESSAGE, service.send)).toEqual({ kind: "sent", status: 201 });

    expect(service.received).toHaveLength(1);
    const [got] = service.received;
    expect(got.url).toBe(who.target.endpoint);
    expect(got.method).toBe("POST");
    expect(got.payload).toEqual({ title: "Trip planner", body: "New entry in todos", link: "/todos" });
    expect(got.headers.get("content-encoding")).toBe("aes128gcm");
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(Number(got.headers.get("ttl"))).toBeGreaterThan(0);
    expect(got.headers.get("urgency")).toBe("normal");
    expect(got.headers.has("topic")).toBe(false);
    expect(got.claims.aud).toBe("https://push.example.com");
    expect(got.claims.sub).toBe(`mailto:${config(env).mailFrom}`);
    expect(got.claims.exp).toBeGreaterThan(before);
    expect(got.claims.exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 3600);
    expect(await rowFor(who.target.endpoint)).toBe(human.humanId);
  });

  it("a tag rides in the payload and becomes a hashed Topic: the same tag the same topic, another tag another", async () => {
    const human = await signIn();
    const publicKey = await relayPublicKey(human);
    const who = await browser();
    const service = pushService(who, publicKey);
    for (const tag of ["rule-1", "rule-1", "rule-2"]) {
      expect((await sendPush(env, who.target, { ...MESSAGE, link: null, tag }, service.send)).kind).toBe("sent");
    }
    expect(service.received.map((r) => r.payload)).toEqual(["rule-1", "rule-1", "rule-2"].map((tag) => ({ ...MESSAGE, link: null, tag })));
    const topics = service.received.map((r) => r.headers.get("topic") ?? "");
    for (const topic of topics) expect(topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    expect(topics[0]).toBe(topics[1]);
    expect(topics[2]).not.toBe(topics[0]);
    expect(topics[0]).not.toContain("rule");
  });
});

describe("sendPush: the push service's answer", () => {
  it("410 and 404 are gone, and deleteGoneSubscription deletes that subscription and no other", async () => {
    const human = await signIn();
    const publicKey = await relayPublicKey(human);
    const kept = await browser();
    await saved(human, kept);
    for (const status of [410, 404] as const) {
      const who = await browser();
      await saved(human, who);
      const service = pushService(who, publicKey, status);
      const outcome = await sendPush(env, who.target, MESSAGE, service.send);
      expect(outcome).toEqual({ kind: "gone", status });
      expect(service.received).toHaveLength(1);
      expect(await rowFor(who.target.endpoint)).toBe(human.humanId);
      expect(await deleteGoneSubscription(env, who.target.endpoint)).toBe(true);
      expect(await rowFor(who.target.endpoint)).toBeNull();
      expect(await deleteGoneSubscription(env, who.target.endpoint)).toBe(false);
    }
    expect(await rowFor(kept.target.endpoint)).toBe(human.humanId);
  });

  it("500 and a redirect fail without a retry time; 429 and 503 fail with Retry-After in seconds", async () => {
    const human = await signIn();
    const publicKey = await relayPublicKey(human);
    const who = await browser();
    const answers: Array<[number, Record<string, string>, number | null]> = [
      [500, {}, null],
      [301, { location: "http://127.0.0.1:9/elsewhere" }, null],
      [400, {}, null],
      [429, { "retry-after": "120" }, 120],
      [503, { "retry-after": new Date(Date.now() + 90_000).toUTCString() }, 90],
    ];
    for (const [status, headers, retry] of answers) {
      const service = pushService(who, publicKey, status, headers);
      const outcome = await sendPush(env, who.target, MESSAGE, service.send);
      expect(service.received).toHaveLength(1);
      expect(outcome).toMatchObject({ kind: "failed", status, error: expect.stringContaining(String(status)) });
      if (outcome.kind !== "failed") throw new Error("expected a failure");
      if (retry === null || status === 429) expect(outcome.retryAfterSeconds).toBe(retry);
      else expect(outcome.retryAfterSeconds).toBeGreaterThanOrEqual(retry - 2);
    }
  });

  it("a send that throws is a failure with no status", async () => {
    const who = await browser();
    const outcome = await sendPush(env, who.target, MESSAGE, async () => {
      throw new Error("connection reset");
    });
    expect(outcome).toEqual({ kind: "failed", status: null, error: expect.stringContaining("connection reset"), retryAfterSeconds: null, retryable: true });
  });
});

describe("sendPush: which endpoints and keys", () => {
  /** Production with VAPID_PRIVATE_KEY set to a fresh bare scalar, and that key's public point. */
  async function production(): Promise<{ env: Env; publicKey: string }> {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey) as JsonWebKey;
    const publicKey = b64url(new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey) as ArrayBuffer));
    return { env: { ...env, RELAY_ENV: "production", VAPID_PRIVATE_KEY: jwk.d } as Env, publicKey };
  }

  it("production refuses plain http (loopback too), IP literals, private names and userinfo before sending anything", async () => {
    const prod = (await production()).env;
    for (const endpoint of [
      "http://127.0.0.1:9/push", "http://push.example.com/x", "https://127.0.0.1/push", "https://10.0.0.1/push",
      "https://[::1]/push", "https://localhost/push", "https://printer.local/push", "https://metadata.google.internal/x",
      "https://user:pw@push.example.com/x", "not a url",
    ]) {
      const who = await browser(endpoint);
      const outcome = await sendPush(prod, who.target, MESSAGE, unreachable);
      expect(outcome, endpoint).toMatchObject({ kind: "failed", status: null, retryAfterSeconds: null });
      await expect(buildPushRequest(prod, who.target, MESSAGE), endpoint).rejects.toThrow(/push endpoint is refused/);
    }
  });

  it("production signs with VAPID_PRIVATE_KEY, and without one nothing is sent", async () => {
    const prod = await production();
    const who = await browser();
    const service = pushService(who, prod.publicKey);
    expect(await sendPush(prod.env, who.target, MESSAGE, service.send)).toEqual({ kind: "sent", status: 201 });
    expect(service.received[0].payload).toEqual(MESSAGE);
    expect(service.received[0].claims.aud).toBe("https://push.example.com");

    const keyless = { ...env, RELAY_ENV: "production" } as Env;
    const outcome = await sendPush(keyless, who.target, MESSAGE, unreachable);
    expect(outcome).toMatchObject({ kind: "failed", status: null, error: expect.stringContaining("VAPID_PRIVATE_KEY") });
  });

  it("development sends a plain-http loopback endpoint to that address, built and signed for its https form", async () => {
    const human = await signIn();
    const publicKey = await relayPublicKey(human);
    for (const endpoint of ["http://127.0.0.1:9/push/a", "http://localhost:9/push/b", "http://[::1]:9/push/c", "https://127.0.0.1:9/push/d"]) {
      const who = await browser(endpoint);
      const service = pushService(who, publicKey);
      expect(await sendPush(env, who.target, MESSAGE, service.send), endpoint).toEqual({ kind: "sent", status: 201 });
      expect(service.received[0].url).toBe(endpoint);
      expect(service.received[0].claims.aud).toBe(new URL(endpoint.replace(/^http:/, "https:")).origin);
      expect(service.received[0].payload).toEqual(MESSAGE);
    }
    // Other plain-http hosts stay refused in development.
    const public80 = await browser("http://push.example.com/x");
    expect(await sendPush(env, public80.target, MESSAGE, unreachable)).toMatchObject({ kind: "failed", status: null });
  });

  it("the default send really goes to the loopback address: nothing listens on port 9, so it fails with no status", async () => {
    const who = await browser("http://127.0.0.1:9/push");
    const outcome = await sendPush(env, who.target, MESSAGE);
    expect(outcome).toMatchObject({ kind: "failed", status: null, retryAfterSeconds: null });
    if (outcome.kind === "failed") expect(outcome.error).toContain("could not be reached");
  });
});
