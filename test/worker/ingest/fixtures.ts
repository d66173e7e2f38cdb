// Shared material for the inbound hook tests: an app deployed by a fresh owner with an
// `issues` collection (slug unique, for upsert rules) and the ingest rules a test passes,
// the hooks list, posting to a hook URL (signed like GitHub when a secret is given), and
// reading rows and the delivery journal back through the owner's API.
import { call, claimedAgent, json, signIn, type CallOptions } from "../helpers";

export type Obj = Record<string, unknown>;

export const ISSUE = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 200 }, slug: { type: ["string", "null"], maxLength: 80 }, state: { type: ["string", "null"] },
    hook: { type: "string" }, payload: {}, receivedAt: { type: "string" },
  },
  additionalProperties: false,
};

export function ingestManifest(ingest: Obj[], extra: Obj = {}): Obj {
  return {
    $defs: { Issue: ISSUE },
    "x-service-manifest": {
      app: { name: "Inbound" },
      collections: { issues: { schema: { $ref: "#/$defs/Issue" }, read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["slug"] }, ...(extra.collections as Obj ?? {}) },
      ingest,
      ...Object.fromEntries(Object.entries(extra).filter(([key]) => key !== "collections")),
    },
  };
}

export interface HookView {
  name: string; url: string; collection: string | null; mode: string | null; wake: boolean | null; handshake: string | null;
  disabledAt: string | null; createdAt: string; verify: null;
  signingSecret: { configured: boolean; fingerprint: string | null; setAt: string | null; previousUntil: string | null };
  deliveries: { accepted: number; failed: number; dropped_duplicate: number };
}

export interface DeliveryView {
  id: string; hook: string; status: string; source: string; dedupeKey: string | null; rowKey: string | null;
  error: { code: string; message: string } | null; payload: unknown; payloadTruncated: boolean; replayOfId: string | null; createdAt: string;
}

export async function deployIngest(ingest: Obj[], extra: Obj = {}) {
  const human = await signIn();
  const key = (await claimedAgent(human)).api_key;
  const app = await json<{ app_id: string; slug: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: ingestManifest(ingest, extra) } }), 201);
  const appId = app.app_id;
  const hooks = async () => (await json<{ hooks: HookView[] }>(await call(`/v1/apps/${appId}/ingest-hooks`, { key }), 200)).hooks;
  const hook = async (name: string) => (await hooks()).find((h) => h.name === name)!;
  const rows = async () => (await json<{ rows: { key: string; data: Obj; version: number; author: { kind: string; id: string } }[] }>(
    await call(`/v1/apps/${appId}/collections/issues?limit=1000`, { key }), 200)).rows;
  const deliveries = async (query = "") => (await json<{ deliveries: DeliveryView[] }>(await call(`/v1/apps/${appId}/ingest/deliveries${query}`, { key }), 200)).deliveries;
  const redeploy = async (nextIngest: Obj[], more: Obj = {}) => json(await call(`/v1/apps/${appId}/versions`, { key, json: { manifest: ingestManifest(nextIngest, more) } }), 200);
  return { human, key, appId, slug: app.slug, hooks, hook, rows, deliveries, redeploy };
}

/** The path part of a hook URL (the tests dispatch to the Worker directly). */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}

export async function githubSignature(secret: string, body: string | Uint8Array): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** POSTs `body` (an object is sent as JSON text) to a hook URL. */
export function post(url: string, body: unknown, opts: CallOptions = {}): Promise<Response> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return call(pathOf(url), { method: "POST", body: text, contentType: "application/json", ...opts });
}
