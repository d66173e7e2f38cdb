// Shared material for the apps tests: manifests that each test changes in one place,
// tiny real files (PNG, GIF, PDF, text) as bytes and base64, a claimed agent ready to
// deploy, and a snapshot of everything a failed deploy must leave untouched (D1 rows of
// the app and its owner, the live version, the live document).
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, claimedAgent, count, json, signIn, type Registered, type SignedIn } from "../helpers";

type Obj = Record<string, unknown>;

export const SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema";

export const NOTE_DEF = {
  type: "object",
  properties: { text: { type: "string", maxLength: 500 }, tag: { type: "string", maxLength: 40 }, due: { type: "string", maxLength: 40 } },
  required: ["text"],
  additionalProperties: false,
};

/** An owner-only collection over the Note schema; `over` replaces keys (undefined removes). */
export function notesCollection(over: Obj = {}): Obj {
  const base: Obj = { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"], ...over };
  for (const k of Object.keys(base)) if (base[k] === undefined) delete base[k];
  return base;
}

/** A manifest document: `ext` is merged into x-service-manifest (after app and collections). */
export function manifestWith(collections: Record<string, Obj> = { notes: notesCollection() }, ext: Obj = {}, name = "Notes"): Obj {
  return {
    $schema: SCHEMA_URI,
    $defs: { Note: NOTE_DEF },
    "x-service-manifest": { app: { name }, collections, ...ext },
  };
}

/** The default manifest: one owner-only `notes` collection. */
export const MANIFEST = manifestWith();

/** A manifest whose `notes` collection anyone may read (an advisory on public and link apps). */
export const WORLD_READABLE = manifestWith({ notes: notesCollection({ read: ["anyone"] }) });

/** A manifest that produces a deploy warning (schedules without a timezone). */
export const WITH_SCHEDULE = manifestWith({ notes: notesCollection() }, {
  schedules: [{ collection: "notes", dateField: "due", to: ["owner"], subject: "Due: {{text}}", body: "{{text}} is due" }],
});

// ---- files ----

/** A complete 1×1 transparent PNG. */
export const PNG = Uint8Array.from(atob(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
), (c) => c.charCodeAt(0));

/** A complete 1×1 GIF. */
export const GIF = Uint8Array.from(atob("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"), (c) => c.charCodeAt(0));

export const PDF = new TextEncoder().encode("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");

export function b64(bytes: Uint8Array | string): string {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let binary = "";
  for (const b of data) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Bytes no other test uses (so their content address is fresh), as a text file. */
export function uniqueText(label = "file"): Uint8Array {
  return new TextEncoder().encode(`${label} ${crypto.randomUUID()}\n`);
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** R2 keys under a prefix. */
export async function blobKeys(prefix: string): Promise<string[]> {
  const listed = await env.BLOBS.list({ prefix });
  return listed.objects.map((o) => o.key);
}

// ---- actors ----

export interface Owner {
  human: SignedIn;
  agent: Registered;
  key: string;
}

/** A signed-in human with one claimed agent. */
export async function owner(): Promise<Owner> {
  const human = await signIn();
  const agent = await claimedAgent(human);
  return { human, agent, key: agent.api_key };
}

/** The ids of the owner's apps as /v1/apps lists them (`query` adds parameters, from `&`). */
export async function listedIds(who: Owner, query = ""): Promise<string[]> {
  return (await json<{ items: Array<{ id: string }> }>(await call(`/v1/apps?limit=200${query}`, { key: who.key }), 200)).items.map((a) => a.id);
}

/** The ids of the apps the owner's console lists (/v1/self/apps). */
export async function consoleListedIds(who: Owner): Promise<string[]> {
  return (await json<{ items: Array<{ id?: string; app_id?: string }> }>(await call("/v1/self/apps", { session: who.human.session }), 200)).items.map((a) => (a.id ?? a.app_id)!);
}

/** The one app the owner's agent created besides `others`, read from D1 (an app in flight is in no list). */
export async function appMadeBesides(who: Owner, others: string[]): Promise<{ id: string; slug: string }> {
  const rows = await env.DB.prepare(`SELECT id, slug FROM apps WHERE created_by_agent_id = ?1 AND id NOT IN (SELECT value FROM json_each(?2))`)
    .bind(who.agent.agent_id, JSON.stringify(others)).all<{ id: string; slug: string }>();
  expect(rows.results).toHaveLength(1);
  return rows.results[0];
}

export interface Created {
  app_id: string;
  slug: string;
  visibility: "private" | "link" | "public";
  url: string;
  version: number;
  created: true;
  share_url?: string;
  warnings?: string[];
}

/** Creates an app (201 asserted). */
export async function deploy(key: string, body: Obj = {}): Promise<Created> {
  return json<Created>(await call("/v1/apps", { key, json: { html: "<h1>v1</h1>", manifest: MANIFEST, ...body } }), 201);
}

export interface Redeployed {
  app_id: string;
  version: number;
  compat: "clean" | "forced";
  breaks?: Array<{ path: string; message: string }>;
  warnings?: string[];
}

export async function redeploy(key: string, appId: string, body: Obj): Promise<Redeployed> {
  return json<Redeployed>(await call(`/v1/apps/${appId}/versions`, { key, json: body }), 200);
}

// ---- "nothing changed" ----

export interface VersionRecord {
  version: number;
  manifest: Obj;
  documentSha256: string;
  assets: Array<{ path: string; sha256: string; size: number; mime: string }>;
  compat: string;
  breaks: unknown;
}

export async function versionRecord(appId: string, version: number): Promise<VersionRecord> {
  const row = await env.DB.prepare("SELECT * FROM app_versions WHERE app_id = ?1 AND version = ?2").bind(appId, version)
    .first<Record<string, unknown>>();
  expect(row, `version ${version} of ${appId}`).not.toBeNull();
  return {
    version: row!.version as number,
    manifest: JSON.parse(row!.manifest_json as string),
    documentSha256: row!.document_sha256 as string,
    assets: JSON.parse(row!.assets_json as string),
    compat: row!.compat as string,
    breaks: row!.breaks_json === null ? null : JSON.parse(row!.breaks_json as string),
  };
}

export interface AppState {
  row: Record<string, unknown> | null;
  versions: number;
  html: string | null;
}

/** The app's D1 row, its version count and the live document as the owner reads it. */
export async function appState(appId: string, key: string): Promise<AppState> {
  const row = await env.DB.prepare("SELECT * FROM apps WHERE id = ?1").bind(appId).first<Record<string, unknown>>();
  const versions = await count("app_versions", "app_id = ?1", appId);
  const res = await call(`/v1/apps/${appId}/document`, { key });
  const html = res.status === 200 ? (await res.json<{ html: string }>()).html : (await res.arrayBuffer(), null);
  return { row, versions, html };
}

/** Counts of apps and versions of one human. */
export async function ownerCounts(humanId: string): Promise<{ apps: number; versions: number }> {
  return {
    apps: await count("apps", "owner_human_id = ?1", humanId),
    versions: await count("app_versions", "app_id IN (SELECT id FROM apps WHERE owner_human_id = ?1)", humanId),
  };
}

/** Runs `fail` (which must assert its own error) and checks the app and its owner are exactly as before. */
export async function unchanged(o: Owner, appId: string | null, fail: () => Promise<unknown>): Promise<void> {
  const before = { counts: await ownerCounts(o.human.humanId), app: appId ? await appState(appId, o.key) : null };
  await fail();
  const after = { counts: await ownerCounts(o.human.humanId), app: appId ? await appState(appId, o.key) : null };
  expect(after).toEqual(before);
}
