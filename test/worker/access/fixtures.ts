// Shared material for the delegated-access tests (service credentials and grant links):
// one manifest with two custom roles and a collection per behaviour, an app deployed by a
// claimed agent whose human can also manage it with a session, short-hands for the
// credential and grant routes, calls with a service credential as the bearer, and a
// snapshot of the access tables so a refused request can be shown to have changed nothing.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, claimedAgent, json, signIn, type CallOptions, type Registered, type SignedIn } from "../helpers";

export type Obj = Record<string, unknown>;

export const NOTE = {
  type: "object",
  properties: { text: { type: "string", maxLength: 200 }, project: { type: "string", maxLength: 40 } },
  required: ["text"],
  additionalProperties: false,
};

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };

export const COLLECTIONS: Record<string, Obj> = {
  // Readable and writable by the custom roles; editors update only their own rows.
  notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner", "staff", "guest"], write: ["owner", "staff"], update: ["owner", "staff:own"], delete: ["owner"], countRead: ["owner"] },
  // Owner only: a credential reaches it through the owner's authority.
  secrets: { ...owned, countRead: ["owner"] },
  // Another owner-only collection, for "following" credentials.
  extra: { ...owned },
  // Nobody reads it, not even the owner: the allowlist cannot widen that.
  sealed: { read: [], write: ["owner"], delete: ["owner"] },
};

export function manifestOf(collections: Record<string, Obj> = COLLECTIONS): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Note: NOTE },
    "x-service-manifest": {
      app: { name: "Access" },
      collections,
      roles: { staff: { label: "Staff" }, guest: { label: "Guest", description: "reads notes" } },
    },
  };
}

export const MANIFEST = manifestOf();

export interface Row {
  key: string;
  data: Obj;
  version: number;
  author: { kind: string; id: string };
  creator: { kind: string; id: string };
  editor: { kind: string; id: string };
}

export interface Minted {
  id: string;
  token: string;
  token_prefix: string;
  mode: string;
  grants: Obj[];
  members: boolean;
  label: string | null;
  expires_at: string | null;
  created_at: string;
}

export interface CredentialView {
  id: string;
  label: string | null;
  token_prefix: string;
  mode: string;
  grants: Obj[];
  members: boolean;
  paused: boolean;
  active: boolean;
  expires_at: string | null;
  paused_at: string | null;
  revoked_at: string | null;
  rotated_at: string | null;
  previous_token_prefix: string | null;
  previous_expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export interface GrantView {
  id: string;
  role: string;
  mode: "once" | "multi";
  max_uses: number | null;
  use_count: number;
  claim_count: number;
  pin_row_key: string | null;
  pin_where: Obj[] | null;
  label: string | null;
  active: boolean;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
  grant_url?: string;
}

export const CREDENTIAL_VIEW_KEYS = [
  "active", "created_at", "expires_at", "grants", "id", "label", "last_used_at", "members", "mode", "paused", "paused_at",
  "previous_expires_at", "previous_token_prefix", "revoked_at", "rotated_at", "token_prefix",
];
export const GRANT_VIEW_KEYS = [
  "active", "claim_count", "created_at", "expires_at", "id", "label", "max_uses", "mode", "pin_row_key", "pin_where", "revoked_at", "role", "use_count",
];
export const DAY = 86_400;

/** An app deployed by a claimed agent; its human can manage it with a session too. */
export class App {
  constructor(readonly human: SignedIn, readonly agent: Registered, readonly appId: string, readonly slug: string, readonly url: string) {}

  get key(): string {
    return this.agent.api_key;
  }

  /** As the agent (or `opts.key` / `opts.session` when given). */
  call(path: string, opts: CallOptions = {}): Promise<Response> {
    return call(path, opts.key !== undefined || opts.session !== undefined || opts.authorization !== undefined ? opts : { key: this.key, ...opts });
  }

  rows(collection: string, rest = ""): string {
    return `/v1/apps/${this.appId}/collections/${collection}${rest}`;
  }

  get credentials(): string {
    return `/v1/apps/${this.appId}/credentials`;
  }

  get grants(): string {
    return `/v1/apps/${this.appId}/grants`;
  }

  async mint(body: Obj = {}): Promise<Minted> {
    return json<Minted>(await this.call(this.credentials, { json: body }), 201);
  }

  async listCredentials(): Promise<CredentialView[]> {
    return (await json<{ credentials: CredentialView[] }>(await this.call(this.credentials), 200)).credentials;
  }

  async credential(id: string): Promise<CredentialView> {
    const found = (await this.listCredentials()).find((c) => c.id === id);
    expect(found).toBeDefined();
    return found!;
  }

  async mintGrant(body: Obj): Promise<GrantView & { grant_url: string }> {
    return json<GrantView & { grant_url: string }>(await this.call(this.grants, { json: body }), 201);
  }

  async listGrants(): Promise<GrantView[]> {
    return (await json<{ grants: GrantView[] }>(await this.call(this.grants), 200)).grants;
  }

  async create(collection: string, data: Obj, key?: string): Promise<Row> {
    const res = await this.call(this.rows(collection), { json: key === undefined ? { data } : { data, key } });
    return (await json<{ row: Row }>(res, 201)).row;
  }

  /** A call with a service credential as the bearer. */
  withToken(token: string, path: string, opts: CallOptions = {}): Promise<Response> {
    return call(path, { ...opts, key: token });
  }
}

/** A signed-in human, a claimed agent, and an app deployed with `manifest`. */
export async function setup(manifest: Obj = MANIFEST, visibility = "private"): Promise<App> {
  const human = await signIn();
  const agent = await claimedAgent(human);
  const created = await json<{ app_id: string; slug: string; url: string }>(
    await call("/v1/apps", { key: agent.api_key, json: { html: "<p>access</p>", manifest, visibility } }), 201,
  );
  return new App(human, agent, created.app_id, created.slug, created.url);
}

/** A second app of the same owner (same agent). */
export async function sibling(app: App, manifest: Obj = MANIFEST): Promise<App> {
  const created = await json<{ app_id: string; slug: string; url: string }>(
    await call("/v1/apps", { key: app.key, json: { html: "<p>sibling</p>", manifest, visibility: "private" } }), 201,
  );
  return new App(app.human, app.agent, created.app_id, created.slug, created.url);
}

/** Every access row of the app, to prove a refused request changed nothing. */
export async function accessSnapshot(appId: string): Promise<Obj> {
  const all = async (q: string) => (await env.DB.prepare(q).bind(appId).all()).results;
  return {
    credentials: await all("SELECT * FROM service_credentials WHERE app_id = ?1 ORDER BY id"),
    grants: await all("SELECT * FROM grant_links WHERE app_id = ?1 ORDER BY id"),
    holders: await all("SELECT * FROM grant_holders WHERE app_id = ?1 ORDER BY id"),
  };
}

/** Runs `fail` (which asserts its own error) and proves the app's access rows are exactly as before. */
export async function unchanged<T>(appId: string, fail: () => Promise<T>): Promise<T> {
  const before = await accessSnapshot(appId);
  const out = await fail();
  expect(await accessSnapshot(appId)).toEqual(before);
  return out;
}

/** Sets a column of a credential directly (to age it). */
export async function setCredentialColumn(id: string, column: "expires_at" | "previous_expires_at", value: string | null): Promise<void> {
  await env.DB.prepare(`UPDATE service_credentials SET ${column} = ?1 WHERE id = ?2`).bind(value, id).run();
}

export async function setGrantColumn(id: string, column: "expires_at", value: string): Promise<void> {
  await env.DB.prepare(`UPDATE grant_links SET ${column} = ?1 WHERE id = ?2`).bind(value, id).run();
}

export function past(seconds = 1): string {
  return new Date(Date.now() - seconds * 1000).toISOString();
}

/** Milliseconds between an ISO time and now + `seconds`. */
export function offBy(iso: string, seconds: number): number {
  return Math.abs(Date.parse(iso) - (Date.now() + seconds * 1000));
}
