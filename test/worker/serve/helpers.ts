// Shared helpers for the app-origin tests: deploying an app as a claimed agent, calling
// an app origin (`http://<slug>.localhost:8787/...`, the host taken from the URL), and
// signing the owner in to an app through the real /authorize hand-off.
import { expect } from "vitest";
import { call, claimedAgent, dispatch, freshIp, json, signIn, type Registered, type SignedIn } from "../helpers";

export type Obj = Record<string, unknown>;

/** A manifest with no collections; `ext` merges into x-service-manifest, `app` into its app block. */
export function manifest(app: Obj = {}, ext: Obj = {}): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": { app: { name: "Test app", ...app }, collections: {}, ...ext },
  };
}

export const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"></head>
<body><h1 id="content">Secret page body</h1><img src="pic.png" alt="pic"><a href="./notes.txt">notes</a>
<img src="https://cdn.example.com/x.png"><img src="/missing.png"></body></html>`;

/** 1×1 PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
export const TEXT = "hello, assets: 0123456789";

export function b64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

export const ASSETS = [
  { path: "pic.png", content_base64: PNG_BASE64 },
  { path: "notes.txt", content_base64: b64(TEXT) },
  { path: "data/report.pdf", content_base64: b64("%PDF-1.4\n%fake but sniffable\n") },
];

export interface Deployed {
  app_id: string;
  slug: string;
  url: string;
  share_url?: string;
  visibility: string;
}

export interface Owner {
  human: SignedIn;
  agent: Registered;
}

export async function owner(): Promise<Owner> {
  const human = await signIn();
  return { human, agent: await claimedAgent(human) };
}

export async function deploy(who: Owner, body: { html?: string; manifest?: Obj; visibility?: string; slug?: string; assets?: unknown[] } = {}): Promise<Deployed> {
  const res = await call("/v1/apps", {
    key: who.agent.api_key,
    json: { html: body.html ?? PAGE, manifest: body.manifest ?? manifest(), visibility: body.visibility ?? "public", ...(body.slug ? { slug: body.slug } : {}), ...(body.assets ? { assets: body.assets } : {}) },
  });
  return json<Deployed>(res, 201);
}

export interface AppCallOptions {
  method?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: BodyInit;
  /** An app-session token, sent as Authorization: Bearer. */
  token?: string;
  /** A link app's share token, sent as x-service-share. */
  share?: string;
}

export function appRequest(slug: string, path: string, opts: AppCallOptions = {}): Request {
  const headers = new Headers(opts.headers);
  headers.set("cf-connecting-ip", freshIp());
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers.set("content-type", "application/json");
  }
  if (opts.token !== undefined) headers.set("authorization", `Bearer ${opts.token}`);
  if (opts.share !== undefined) headers.set("x-service-share", opts.share);
  return new Request(`http://${slug}.localhost:8787${path}`, {
    method: opts.method ?? (body !== undefined ? "POST" : "GET"), headers, body, redirect: "manual",
  });
}

export function appCall(slug: string, path: string, opts: AppCallOptions = {}): Promise<Response> {
  return dispatch(appRequest(slug, path, opts));
}

/** Calls an app origin through the Worker with extra bindings (e.g. production without a secret). */
export function appCallWith(overrides: Record<string, unknown>, slug: string, path: string, opts: AppCallOptions = {}): Promise<Response> {
  return dispatch(appRequest(slug, path, opts), overrides);
}

export function shareToken(app: Deployed): string {
  const match = /#k=([0-9a-f]+)$/.exec(app.share_url ?? "");
  expect(match).not.toBeNull();
  return match![1];
}

/** Runs /authorize as the signed-in human; returns the grant from the redirect's fragment. */
export async function grantFor(human: SignedIn, slug: string, returnUrl = `http://${slug}.localhost:8787/`): Promise<string> {
  const res = await call(`/authorize?app=${slug}&return=${encodeURIComponent(returnUrl)}`, { session: human.session });
  expect(res.status).toBe(302);
  const location = res.headers.get("location") ?? "";
  const match = /#svc_grant=(sgr_[0-9a-f]{32})$/.exec(location);
  expect(match, location).not.toBeNull();
  return match![1];
}

export interface SessionAnswer {
  token: string;
  expires_at: string;
  session: Obj;
}

/** The owner's app-session token, through /authorize and POST /_svc/session. */
export async function ownerToken(human: SignedIn, slug: string): Promise<string> {
  const grant = await grantFor(human, slug);
  const res = await appCall(slug, "/_svc/session", { json: { grant } });
  return (await json<SessionAnswer>(res, 200)).token;
}

/** Parses a CSP header into directive → sources. */
export function csp(res: Response): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (res.headers.get("content-security-policy") ?? "").split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out[name] = values;
  }
  return out;
}

export function permissions(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.get("permissions-policy") ?? "").split(",")) {
    const [name, value] = part.trim().split("=");
    if (name) out[name] = value;
  }
  return out;
}
