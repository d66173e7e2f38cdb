// Shared helpers for the worker tests: calling the relay as an agent, as a signed-in
// human (magic link through the development outbox) or with a modified environment, and
// asserting the exact error envelope. Every call gets its own fake client address unless
// a test passes one, so the per-IP limiter only interferes where a test wants it to.
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import worker from "../../workers/relay";
import { catalogue, type ErrorCode } from "../../src/errors";
import { clockPast } from "../support/wait";

export const API = "http://localhost:8787";

let ipCounter = 0;
const ipBase = crypto.getRandomValues(new Uint8Array(1))[0];

/** A client address no other call in this file has used. */
export function freshIp(): string {
  ipCounter += 1;
  return `10.${ipBase}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

export interface CallOptions {
  method?: string;
  /** Serialised with JSON.stringify and sent as application/json. */
  json?: unknown;
  /** A raw body, sent as is (set `contentType` yourself). */
  body?: BodyInit | null;
  contentType?: string;
  /** An agent key (or any bearer value). */
  key?: string;
  /** A raw Authorization header, sent as is. */
  authorization?: string;
  /** The session token, sent as the relay_session cookie. */
  session?: string;
  /** Origin header; `null` sends none. Defaults to the API origin when a session is sent. */
  origin?: string | null;
  referer?: string;
  ip?: string;
  cliVersion?: string;
  headers?: Record<string, string>;
  redirect?: "manual" | "follow";
}

export function buildRequest(path: string, opts: CallOptions = {}): Request {
  const headers = new Headers(opts.headers);
  headers.set("cf-connecting-ip", opts.ip ?? freshIp());
  let body: BodyInit | null | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers.set("content-type", "application/json");
  }
  if (opts.contentType !== undefined) headers.set("content-type", opts.contentType);
  if (opts.key !== undefined) headers.set("authorization", `Bearer ${opts.key}`);
  if (opts.authorization !== undefined) headers.set("authorization", opts.authorization);
  if (opts.session !== undefined) {
    headers.set("cookie", `relay_session=${opts.session}`);
    if (opts.origin === undefined && opts.referer === undefined) headers.set("origin", API);
  }
  if (typeof opts.origin === "string") headers.set("origin", opts.origin);
  if (opts.referer !== undefined) headers.set("referer", opts.referer);
  if (opts.cliVersion !== undefined) headers.set("x-service-cli-version", opts.cliVersion);
  const method = opts.method ?? (body !== undefined && body !== null ? "POST" : "GET");
  return new Request(`${API}${path}`, { method, headers, body: body ?? undefined, redirect: opts.redirect ?? "manual" });
}

/**
 * Hands a request to the relay's real entry point (the Worker's default export) with the
 * test environment's bindings — or those plus `overrides` — and waits for its `waitUntil`
 * work. Not `SELF.fetch`: in this pool each SELF.fetch in a file is slower than the one
 * before (an upstream issue), which made long files crawl. Config is cached per env
 * object, so the same bindings keep one cached config.
 */
export async function dispatch(request: Request, overrides?: Record<string, unknown>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, overrides ? ({ ...env, ...overrides } as Env) : env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export function call(path: string, opts: CallOptions = {}): Promise<Response> {
  return dispatch(buildRequest(path, opts));
}

/** `call` with a modified environment (e.g. production settings). */
export function callWith(overrides: Record<string, unknown>, path: string, opts: CallOptions = {}): Promise<Response> {
  return dispatch(buildRequest(path, opts), overrides);
}

export interface Envelope {
  code: string;
  message: string;
  hint: string;
  retryable: boolean;
  docs_url: string;
  details?: Record<string, unknown>;
}

/**
 * Asserts an error response: exact status, JSON body that is exactly `{ error }`, every
 * envelope field present with the catalogue's hint, retryable flag and anchored docs_url.
 */
export async function expectError(res: Response, status: number, code: ErrorCode): Promise<Envelope> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/);
  const body = JSON.parse(text) as { error: Envelope };
  expect(Object.keys(body)).toEqual(["error"]);
  const e = body.error;
  expect(e.code).toBe(code);
  expect(catalogue[code].status).toBe(status);
  expect(typeof e.message).toBe("string");
  expect(e.message.length).toBeGreaterThan(0);
  expect(e.hint).toBe(catalogue[code].hint);
  expect(e.retryable).toBe(catalogue[code].retryable);
  expect(e.docs_url).toBe(`${API}/docs/errors#${code}`);
  const allowed = ["code", "message", "hint", "retryable", "docs_url", "details"];
  for (const k of Object.keys(e)) expect(allowed).toContain(k);
  if (e.details !== undefined) expect(typeof e.details === "object" && e.details !== null && !Array.isArray(e.details)).toBe(true);
  return e;
}

/** Asserts an RFC 8628 string-form device-token error. */
export async function expectRfcError(res: Response, error: "authorization_pending" | "slow_down" | "access_denied" | "expired_token"): Promise<void> {
  expect(res.status).toBe(400);
  const body = await res.json<Record<string, unknown>>();
  expect(Object.keys(body).sort()).toEqual(["error", "error_description"]);
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe("string");
}

export async function json<T = Record<string, unknown>>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  return JSON.parse(text) as T;
}

// ---- D1 ----

export async function count(table: string, where = "1 = 1", ...binds: unknown[]): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).bind(...binds).first<{ n: number }>();
  return row?.n ?? 0;
}

/** Row counts of every identity table, to prove a failed request changed nothing. */
export async function snapshot(): Promise<Record<string, number>> {
  const tables = ["agents", "agent_keys", "claim_codes", "device_codes", "humans", "sessions", "magic_links"];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = await count(t);
  const changed = await env.DB.prepare(
    "SELECT (SELECT count(*) FROM agent_keys WHERE revoked_at IS NOT NULL) AS revoked, (SELECT count(*) FROM agents WHERE paused_at IS NOT NULL) AS paused, (SELECT count(*) FROM agents WHERE owner_human_id IS NOT NULL) AS owned, (SELECT count(*) FROM claim_codes WHERE used_at IS NOT NULL) AS used_codes, (SELECT count(*) FROM sessions WHERE revoked_at IS NOT NULL) AS revoked_sessions, (SELECT group_concat(coalesce(name, '∅'), '|') FROM (SELECT name FROM agents ORDER BY id)) AS names",
  ).first<Record<string, number>>();
  return { ...out, ...changed };
}

// ---- agents ----

export interface Registered {
  agent_id: string;
  api_key: string;
  key_prefix: string;
}

export async function register(name?: string, ip?: string): Promise<Registered> {
  const res = await call("/v1/register", { method: "POST", json: name === undefined ? {} : { name }, ip });
  return json<Registered>(res, 201);
}

/** GET /v1/keys with the key; returns the status (200 when the key works). */
export async function keyStatus(key: string): Promise<number> {
  const res = await call("/v1/keys", { key });
  await res.arrayBuffer();
  return res.status;
}

// ---- humans ----

export interface SignedIn {
  email: string;
  session: string;
  humanId: string;
}

let emailCounter = 0;

export function freshEmail(label = "human"): string {
  emailCounter += 1;
  return `${label}-${emailCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/** The newest sign-in link mailed to `email`, read from the development outbox. */
export async function latestLink(email: string): Promise<string> {
  const res = await call(`/__dev/mail?to=${encodeURIComponent(email)}`);
  const body = await json<{ messages: Array<{ text: string }> }>(res, 200);
  expect(body.messages.length).toBeGreaterThan(0);
  const match = /(http:\/\/localhost:8787\/v1\/auth\/verify\?token=\S+)/.exec(body.messages[0].text);
  expect(match).not.toBeNull();
  return match![1];
}

export async function requestLink(email: string, returnTo?: string): Promise<string> {
  const res = await call("/v1/auth/request-link", { method: "POST", json: returnTo === undefined ? { email } : { email, return_to: returnTo } });
  expect(await json(res, 200)).toEqual({ ok: true });
  return latestLink(email);
}

/** Parses the relay_session value out of a Set-Cookie header, or null. */
export function sessionFrom(res: Response): string | null {
  const header = res.headers.get("set-cookie");
  const match = header ? /(?:^|,\s*)relay_session=([^;]*)/.exec(header) : null;
  return match ? match[1] : null;
}

export async function openLink(link: string): Promise<Response> {
  const url = new URL(link);
  return call(url.pathname + url.search);
}

/** Signs a human in through request-link, the outbox and the verify link. */
export async function signIn(email = freshEmail()): Promise<SignedIn> {
  const link = await requestLink(email);
  const res = await openLink(link);
  expect(res.status).toBe(302);
  const session = sessionFrom(res);
  expect(session).toMatch(/^sess_[0-9a-f]{32}$/);
  const human = await env.DB.prepare("SELECT id FROM humans WHERE email = ?1").bind(email.toLowerCase()).first<{ id: string }>();
  return { email, session: session!, humanId: human!.id };
}

export async function mintClaimCode(human: SignedIn): Promise<{ code: string; expires_at: string }> {
  const res = await call("/v1/self/claim-codes", { method: "POST", session: human.session });
  return json(res, 201);
}

/** Registers an agent and binds it to `human` through a claim code. */
export async function claimedAgent(human: SignedIn, name?: string): Promise<Registered> {
  const agent = await register(name);
  const { code } = await mintClaimCode(human);
  await json(await call("/v1/agents/claim", { method: "POST", key: agent.api_key, json: { code } }), 200);
  return agent;
}

/**
 * Waits until at least `margin` seconds remain in the limiter's current fixed window: a
 * time wait, since the window is the limiter's clock; when it is too near its end, the
 * next window has begun once the clock is past this one.
 */
export async function awaitFreshWindow(windowSeconds = 60, margin = 8): Promise<void> {
  const windowMs = windowSeconds * 1000;
  const now = Date.now();
  if (windowMs - (now % windowMs) < margin * 1000) await clockPast(now, windowMs);
}
