// Shared material for the community install tests: a todo template's manifest (a seeded
// `todos` collection and an owner-only `settings` collection), and a listed template put
// in place the way an approved publish leaves it — a claimed publisher handle, the
// document in the content-addressed store, and an approved template_snapshots row —
// written through the publishing side's own schema, so these tests do not depend on the
// operator review flow. Each call makes its own publisher, handle and slug.
import { env } from "cloudflare:test";
import { drizzle } from "drizzle-orm/d1";
import { eq } from "drizzle-orm";
import { publishers, templateSnapshots } from "../../../src/db/community-schema";
import { putContentAddressed } from "../../../src/blobs/store";
import { newId } from "../../../src/auth/tokens";
import { claimedAgent, signIn, type Registered, type SignedIn } from "../helpers";

type Obj = Record<string, unknown>;

export const todoDefinition = {
  type: "object",
  properties: { title: { type: "string", maxLength: 200 }, done: { type: "boolean" } },
  required: ["title"],
  additionalProperties: false,
};
export const SETTINGS_DEF = {
  type: "object",
  properties: { greeting: { type: "string" }, color: { type: "string" }, api_token: { type: "string" }, logo: { type: "string" } },
  additionalProperties: false,
};

/** The todo template's manifest; `ext` merges into x-service-manifest, `todo` replaces the Todo schema. */
export function todoManifest(ext: Obj = {}, todo: Obj = todoDefinition): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Todo: todo, Settings: SETTINGS_DEF },
    "x-service-manifest": {
      app: { name: "Todo" },
      collections: {
        todos: { schema: { $ref: "#/$defs/Todo" }, read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"], seedOnInstall: true },
        settings: { schema: { $ref: "#/$defs/Settings" }, read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] },
      },
      settingsCollection: "settings",
      ...ext,
    },
  };
}

export const todoPage = "<!doctype html><title>Todo</title><h1>Todo</h1>";

export const SETUP_STEPS = [
  { kind: "note", label: "Welcome" },
  { kind: "config", key: "greeting", label: "Greeting", required: true, valueHint: "shown at the top" },
  { kind: "config", key: "color", label: "Colour", choices: ["red", "blue"], default: "blue" },
  { kind: "config", key: "api_token", label: "API token", secret: true },
  { kind: "upload", key: "logo", label: "Logo" },
  { kind: "connect", label: "Point your form here", ingestRule: "signups" },
];

export const SEED_ROWS = { todos: [{ key: "t1", data: { title: "Buy milk" } }, { key: "t2", data: { title: "Walk the dog", done: true } }] };

export interface Publisher {
  human: SignedIn;
  agent: Registered;
  handle: string;
}

export async function publisher(): Promise<Publisher> {
  const human = await signIn();
  const agent = await claimedAgent(human);
  const handle = `pub-${crypto.randomUUID().slice(0, 8)}`;
  await drizzle(env.DB).insert(publishers).values({ humanId: human.humanId, handle, claimedAt: new Date().toISOString(), createdAt: new Date().toISOString() });
  return { human, agent, handle };
}

export interface SnapshotOptions {
  slug?: string;
  version?: string;
  manifest?: Obj;
  html?: string;
  seedRows?: Obj;
  setupSteps?: Obj[];
  reviewStatus?: "pending" | "approved" | "rejected";
  unpublished?: boolean;
  changelog?: string;
}

/** An approved (by default) snapshot of the publisher's todo template; answers its id. */
export async function listTemplate(pub: Publisher, options: SnapshotOptions = {}): Promise<string> {
  const html = options.html ?? todoPage;
  const document = await putContentAddressed(env.BLOBS, "doc", new TextEncoder().encode(html), "text/html; charset=utf-8");
  const manifest = options.manifest ?? todoManifest();
  const seedRows = options.seedRows ?? SEED_ROWS;
  const id = newId("tpl_");
  const now = new Date().toISOString();
  await drizzle(env.DB).insert(templateSnapshots).values({
    id, publisherHumanId: pub.human.humanId, publishedByAgentId: pub.agent.agent_id, sourceAppId: "app_source", sourceAppVersion: 1, versionId: `v_${id}`,
    name: "Todo", slug: options.slug ?? "todo", version: options.version ?? "1.0.0", title: "Todo", description: "A todo list", longDescription: null, category: null,
    tagsJson: "[]", documentSha256: document.sha256, documentBytes: html.length, manifestJson: JSON.stringify(manifest), assetsJson: "[]",
    seedRowsJson: JSON.stringify(seedRows), seededRowCount: Object.values(seedRows).flat().length, attestExampleOnly: true,
    setupStepsJson: JSON.stringify(options.setupSteps ?? SETUP_STEPS), settingsCollection: "settings", externalDestinationsJson: "[]",
    changelog: options.changelog ?? null, license: null, licenseTerms: null, derivedFromSnapshotId: null,
    reviewStatus: options.reviewStatus ?? "approved", expedited: false, autoApproved: false, reviewedAt: now, reviewedByHumanId: null, reviewNote: null,
    supersededAt: null, publishedAt: now, unpublishedAt: options.unpublished ? now : null,
  });
  return id;
}

export async function unpublish(snapshotId: string): Promise<void> {
  await drizzle(env.DB).update(templateSnapshots).set({ unpublishedAt: new Date().toISOString() }).where(eq(templateSnapshots.id, snapshotId));
}

/** A second person with a claimed agent: the installer. */
export async function installer(): Promise<{ human: SignedIn; agent: Registered }> {
  const human = await signIn();
  return { human, agent: await claimedAgent(human) };
}
