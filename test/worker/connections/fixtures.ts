// Shared material for the connections tests: an owner with a claimed agent and a deployed
// app, calls to its connections routes as that agent, valid static and oauth2 bodies to
// vary, and the raw stored rows (to prove secrets are sealed and nothing changed).
import { env } from "cloudflare:test";
import { call, json, type CallOptions } from "../helpers";
import { deploy, owner, type Deployed, type Owner } from "../serve/helpers";

export type Obj = Record<string, unknown>;

export const HEADER_SECRET = "Bearer sk_live_static_header_secret_0123456789";
export const CLIENT_SECRET = "oauth-client-secret-abcdefghijklmnop";

export interface ConnectionBody {
  id: string;
  name: string;
  kind: "static" | "oauth2";
  provider: string | null;
  label: string | null;
  allowedHost: string;
  headerName: string;
  status: "pending_auth" | "active" | "needs_reauth";
  authScheme: string | null;
  instanceBaseUrl: string | null;
  scopes: string | null;
  expiresAt: string | null;
  secretFingerprint: string;
  createdAt: string;
}

export interface Setup {
  who: Owner;
  app: Deployed;
  /** `/v1/apps/<id>/connections` */
  path: string;
  /** Calls a path under the app's connections as the owner's agent. */
  call(suffix?: string, opts?: CallOptions): Promise<Response>;
  create(body: Obj): Promise<ConnectionBody>;
}

export async function setup(): Promise<Setup> {
  const who = await owner();
  const app = await deploy(who);
  const path = `/v1/apps/${app.app_id}/connections`;
  const callAs = (suffix = "", opts: CallOptions = {}) => call(`${path}${suffix}`, { key: who.agent.api_key, ...opts });
  return {
    who, app, path, call: callAs,
    async create(body) {
      return (await json<{ connection: ConnectionBody }>(await callAs("", { json: body }), 201)).connection;
    },
  };
}

export function staticBody(overrides: Obj = {}): Obj {
  return { name: "crm", allowedHost: "api.example.com", headerName: "Authorization", headerValue: HEADER_SECRET, ...overrides };
}

export function oauthBody(overrides: Obj = {}): Obj {
  return {
    name: "calendar", kind: "oauth2", allowedHost: "*.example.com",
    authorizeUrl: "https://auth.example.com/authorize", tokenEndpoint: "https://auth.example.com/token",
    clientId: "client-123", clientSecret: CLIENT_SECRET, scopes: "read write", ...overrides,
  };
}

/** Every stored connection column of the app, as D1 holds it. */
export async function storedRows(appId: string): Promise<Obj[]> {
  return (await env.DB.prepare("SELECT * FROM app_connections WHERE app_id = ?1 ORDER BY created_at, id").bind(appId).all<Obj>()).results;
}

export async function sha256Prefix(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 8);
}

/** An http URL on a loopback port where nothing listens (port 9, discard, is never served here). */
export function closedLoopbackUrl(path: string): string {
  return `http://127.0.0.1:9${path}`;
}
