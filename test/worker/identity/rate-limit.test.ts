// The per-IP limiter on the unauthenticated identity routes (production defaults, set
// explicitly for these tests in vitest.config.mts: register 10, device code 10, device
// token 60, request-link 5, claim 10 per 60 s):
// the request after the limit gets 429 rate_limited, retryable, with Retry-After, and
// changes nothing; other addresses are unaffected.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { awaitFreshWindow, call, callWith, expectError, freshEmail, freshIp, json, mintClaimCode, register, signIn, snapshot, type CallOptions } from "../helpers";

async function exhaust(path: string, limit: number, opts: (i: number) => CallOptions, okStatus: number): Promise<string> {
  await awaitFreshWindow();
  const ip = freshIp();
  for (let i = 0; i < limit; i++) {
    const res = await call(path, { ...opts(i), ip });
    const text = await res.text();
    expect({ i, status: res.status, text }).toMatchObject({ status: okStatus });
  }
  return ip;
}

async function expectLimited(res: Response): Promise<void> {
  const retryAfter = res.headers.get("retry-after");
  const err = await expectError(res, 429, "rate_limited");
  expect(err.retryable).toBe(true);
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(err.details).toMatchObject({ retry_after: seconds });
}

describe("per-IP rate limits", { timeout: 30_000 }, () => {
  it("register: 10 per window, the 11th → 429 and no agent; another address still registers", async () => {
    const ip = await exhaust("/v1/register", 10, () => ({ method: "POST", json: {} }), 201);
    const before = await snapshot();
    await expectLimited(await call("/v1/register", { method: "POST", json: {}, ip }));
    expect(await snapshot()).toEqual(before);
    await json(await call("/v1/register", { method: "POST", json: {}, ip: freshIp() }), 201);
  });

  it("failed requests count too (a guesser cannot probe for free)", async () => {
    const ip = await exhaust("/v1/register", 10, () => ({ method: "POST", body: "{", contentType: "application/json" }), 400);
    await expectLimited(await call("/v1/register", { method: "POST", json: {}, ip }));
  });

  it("device code: 10 per window", async () => {
    const ip = await exhaust("/v1/device/code", 10, () => ({ method: "POST", json: { name: "cli" } }), 200);
    const before = await snapshot();
    await expectLimited(await call("/v1/device/code", { method: "POST", json: { name: "cli" }, ip }));
    expect(await snapshot()).toEqual(before);
  });

  it("device token: 60 per window", async () => {
    const flow = await json<{ device_code: string }>(await call("/v1/device/code", { method: "POST", json: { name: "cli" } }), 200);
    const ip = await exhaust("/v1/device/token", 60, () => ({ method: "POST", json: { device_code: flow.device_code } }), 400);
    await expectLimited(await call("/v1/device/token", { method: "POST", json: { device_code: flow.device_code }, ip }));
  });

  it("request-link: 5 per window, the 6th mails nothing", async () => {
    const email = freshEmail();
    const ip = await exhaust("/v1/auth/request-link", 5, () => ({ method: "POST", json: { email } }), 200);
    const mails = (await env.DB.prepare("SELECT count(*) AS n FROM dev_mail WHERE \"to\" = ?1").bind(email).first<{ n: number }>())!.n;
    expect(mails).toBe(5);
    await expectLimited(await call("/v1/auth/request-link", { method: "POST", json: { email }, ip }));
    const after = (await env.DB.prepare("SELECT count(*) AS n FROM dev_mail WHERE \"to\" = ?1").bind(email).first<{ n: number }>())!.n;
    expect(after).toBe(5);
  });

  it("claim: 10 per window, the 11th is refused before the code is spent", async () => {
    const human = await signIn();
    const agent = await register();
    const ip = await exhaust("/v1/agents/claim", 10, () => ({ method: "POST", key: agent.api_key, json: { code: "cc_wrong" } }), 400);
    const { code } = await mintClaimCode(human);
    const before = await snapshot();
    await expectLimited(await call("/v1/agents/claim", { method: "POST", key: agent.api_key, json: { code }, ip }));
    expect(await snapshot()).toEqual(before);
    await json(await call("/v1/agents/claim", { method: "POST", key: agent.api_key, json: { code }, ip: freshIp() }), 200);
  });

  it("the limits are settings", async () => {
    await awaitFreshWindow();
    const ip = freshIp();
    const tight = { RATE_LIMIT_REGISTER: "1" };
    await json(await callWith(tight, "/v1/register", { method: "POST", json: {}, ip }), 201);
    await expectLimited(await callWith(tight, "/v1/register", { method: "POST", json: {}, ip }));
    // 0 turns the limiter off for that route.
    const off = { RATE_LIMIT_REGISTER: "0" };
    await json(await callWith(off, "/v1/register", { method: "POST", json: {}, ip }), 201);
  });

  it("development mode with no RATE_LIMIT_* set: one address registers 30 agents, asks for 30 device codes and sign-in links", async () => {
    const unset = Object.fromEntries(["RATE_LIMIT_REGISTER", "RATE_LIMIT_DEVICE_CODE", "RATE_LIMIT_REQUEST_LINK"].map((name) => [name, undefined]));
    const ip = freshIp();
    for (let i = 0; i < 30; i++) {
      await json(await callWith(unset, "/v1/register", { method: "POST", json: {}, ip }), 201);
      await json(await callWith(unset, "/v1/device/code", { method: "POST", json: { name: "cli" }, ip }), 200);
      await json(await callWith(unset, "/v1/auth/request-link", { method: "POST", json: { email: freshEmail() }, ip }), 200);
    }
    // The same calls in production mode stop at the default.
    const production = { ...unset, RELAY_ENV: "production" };
    await awaitFreshWindow();
    const other = freshIp();
    for (let i = 0; i < 10; i++) await json(await callWith(production, "/v1/device/code", { method: "POST", json: { name: "cli" }, ip: other }), 200);
    await expectLimited(await callWith(production, "/v1/device/code", { method: "POST", json: { name: "cli" }, ip: other }));
  });

  it("authenticated and read-only routes are not limited", async () => {
    const agent = await register();
    const ip = freshIp();
    for (let i = 0; i < 70; i++) {
      const res = await call("/v1/keys", { key: agent.api_key, ip });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
  });
});
