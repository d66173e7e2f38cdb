// The target both route fuzzes aim at (route-fuzz.test.ts, route-fuzz-params.test.ts): an
// owner's agent key, an app with one row, the relay's own /v1/openapi.json, the owner's
// ids put into a documented path, and the one verdict on an answer: a success or a 4xx
// catalogue envelope with a code and a hint, never a 5xx.
import { call, claimedAgent, json, signIn } from "../helpers";

type Obj = Record<string, any>;

/** Routes that end sessions, keys or apps: left to their own tests, so a fuzz run keeps its footing. */
export const DESTRUCTIVE = /revoke|rotate|logout|purge|transfer|delete|pause|deletion|\/keys|claim/;

export const fuzzManifest = {
  "x-service-manifest": {
    app: { name: "Fuzzed" },
    collections: { notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] } },
    roles: { helper: { label: "Helper" } },
  },
};

export interface FuzzTarget {
  key: string;
  appId: string;
  rowKey: string;
  spec: { paths: Record<string, Record<string, Obj>> };
  /** The path with the owner's app id, the `notes` collection and its row in every `{param}`. */
  fill(path: string): string;
}

export async function fuzzTarget(): Promise<FuzzTarget> {
  const key = (await claimedAgent(await signIn())).api_key;
  const app = await json<Obj>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: fuzzManifest } }), 201);
  const row = (await json<Obj>(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { key: "n1", data: { text: "x" } } }), 201)).row;
  const spec = await json<FuzzTarget["spec"]>(await call("/v1/openapi.json"), 200);
  const fill = (path: string) => path.replace(/\{([A-Za-z_]+)\}/g, (_whole, name: string) => (name === "key" ? row.key : name === "name" ? "notes" : app.app_id));
  return { key, appId: app.app_id, rowKey: row.key, spec, fill };
}

/**
 * What is wrong with an answer (null when it is a success or a catalogue envelope with a
 * 4xx). A 5xx is wrong unless its code is one of `expected5xx`, the documented refusals a
 * caller names for its routes (a relay with no identity provider answers
 * `auth_provider_unavailable`). A page a person's browser lands on
 * (`/oauth/connections/callback`) answers its refusals as a page, so only `/v1` answers are
 * held to the envelope.
 */
export function badAnswer(status: number, text: string, path = "/v1/", expected5xx: readonly string[] = []): string | null {
  const envelope = (() => { try { return JSON.parse(text) as Obj; } catch { return null; } })();
  const code: unknown = envelope?.error?.code;
  if (status >= 500) return typeof code === "string" && expected5xx.includes(code) && envelope?.error?.hint ? null : `${status} ${text.slice(0, 200)}`;
  if (status < 400 || !path.startsWith("/v1/")) return null;
  return code && envelope?.error?.hint ? null : `${status} without the envelope: ${text.slice(0, 200)}`;
}
