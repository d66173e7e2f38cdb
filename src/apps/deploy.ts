/**
 * Deploy and redeploy. Everything a request carries is checked first (document size,
 * manifest, assets, slug, quota, compatibility gate) and only then is anything written:
 * bytes to R2 (content-addressed, so a retry or an abandoned deploy leaves nothing
 * reachable), then the D1 records in one batch: the version with everything derived from
 * it (its inbound hooks, its webhook secret, the discarded tasks of dropped rules), so no
 * crash or failing statement can leave a live version without them. A failed deploy
 * therefore changes nothing a user can see: same version, same document, same assets.
 * A create with starter rows (`input_data`) keeps its app hidden until the rows are in
 * the store, then hands it to its person (seeding.ts).
 */
import { errorLogLine } from "../db/query-errors";
import { BoundedMap } from "../bounded-map";
import { RelayError } from "../errors";
import { config, type Config } from "../config";
import { parseManifest, manifestObject, compatGate, manifestLimitsFrom, validateInputData, type CompiledManifest, type CompatBreak } from "../manifest";
import { putContentAddressed, sha256Bytes } from "../blobs/store";
import { prepareAssets, type AssetInput, type PreparedAsset } from "./assets";
import { attachmentResolver } from "./asset-attachments";
import { friendlySlug, unguessableSlug, validateSlug } from "./slug";
import {
  appCreated, countLiveApps, getVersion, insertAppWithVersion, insertVersionAndAdvance, newAppId, seedingOwner, slugExists, slugHeldBySeeding, stillLiveAt,
  type AppRow, type AppVersionRow, type AssetEntry, type DeployGuard, type Visibility,
} from "../db/apps";
import { mintShareToken } from "./share";
import { appUrl } from "./urls";
import { mintSecretStatement, mintedSecret } from "../effects/webhooks/secret";
import { hookSyncStatements } from "../effects/ingest/hooks";
import { discardStaleTasksStatement } from "../effects/tasks/record";
import { appStore } from "./store";
import { SEEDING_FREED_MINUTES, seedingCapReached, seedThenHandOver } from "./seeding";
import { appCapReached, refusalFor } from "./hand-over";
import { nowIso } from "../auth/tokens";

/** The Worker's bindings: D1 for the registry, R2 for bytes, the AppStore for rows. */
type Env = globalThis.Env;

export interface DeployActor {
  agentId: string;
  ownerHumanId: string | null;
}

export interface CreateInput {
  html: string;
  manifest: unknown;
  visibility?: Visibility;
  slug?: string;
  assets?: AssetInput[];
  dry_run?: boolean;
  /** Starter rows, `{ <collection>: [{ key?, data }] }`: written with the deploy or not at all. */
  input_data?: unknown;
}

export interface RedeployInput {
  html?: string;
  manifest?: unknown;
  assets?: AssetInput[];
  force?: boolean;
  dry_run?: boolean;
}

/** Whether the manifest sends webhooks (its webhooks[] or a schedule's webhook action), which are signed with the app's secret. */
function signsWebhooks(compiled: CompiledManifest): boolean {
  return compiled.webhooks.length > 0 || compiled.schedules.some((rule) => rule.action.kind === "webhook");
}

/**
 * The D1 statements of what a version derives from its manifest, each carrying `guard`,
 * for the deploy's own batch: its inbound hooks, its webhook secret when it signs
 * webhooks, and (on a redeploy) the discarding of queued tasks of rules it dropped. The
 * answer reads the secret, when minted now, back from the batch's results.
 */
function derivedState(env: Env, appId: string, compiled: CompiledManifest, guard: DeployGuard, redeploy: boolean) {
  const secret = signsWebhooks(compiled) ? [mintSecretStatement(env, appId, guard)] : [];
  const statements = [
    ...hookSyncStatements(env, appId, compiled, guard),
    ...(redeploy ? [discardStaleTasksStatement(env, appId, compiled, guard)] : []),
    ...secret,
  ];
  return { statements, webhookSecret: (results: D1Result[]) => (secret.length ? mintedSecret(results[results.length - 1]) : null) };
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function checkDocument(html: string, cfg: Config): Uint8Array {
  const bytes = utf8(html);
  const cap = cfg.limits.MAX_DOCUMENT_BYTES;
  if (bytes.byteLength > cap) {
    throw new RelayError("document_size_exceeded", `The document is ${bytes.byteLength} bytes; the cap is ${cap}.`, { field: "html", limit: cap });
  }
  if (html.trim() === "") throw new RelayError("invalid_request", "The document is empty.", { field: "html" });
  return bytes;
}

/**
 * `manifest` is what the request carried (a JSON object, else `manifest_invalid`) or the
 * live version's. `slug`, when known, lets the compiler refuse the app's own origin in
 * externalHosts and embeds.
 */
export function compile(manifest: unknown, cfg: Config, visibility: Visibility, timezone: string | null, slug?: string): CompiledManifest {
  return compileFor(manifest, cfg, { visibility, timezone, slug, deploying: true });
}

function compileFor(manifest: unknown, cfg: Config, { visibility, timezone, slug, deploying }: { visibility: Visibility; timezone: string | null; slug?: string; deploying: boolean }): CompiledManifest {
  const appOrigin = slug === undefined ? undefined : appUrl(cfg, slug).replace(/\/$/, "");
  // `antiAbuse` only where the relay can run the challenge (WIRE §5.2). Checked when a
  // manifest is deployed, not when a deployed one is loaded again, so an operator who
  // later removes Turnstile leaves those apps running (anonymous writes are then refused).
  const limits = { ...manifestLimitsFrom(cfg), ANTI_ABUSE_ENABLED: cfg.turnstile !== null };
  return parseManifest(manifestObject(manifest), limits, { visibility, timezone, appOrigin, deploying });
}

function assetLimits(cfg: Config) {
  return { maxAssets: cfg.limits.MAX_APP_ASSETS, maxAssetBytes: cfg.limits.MAX_BLOB_BYTES };
}

/** Hash over what makes a version: document, manifest and asset index. */
async function sourceHash(documentSha: string, manifest: CompiledManifest, assets: AssetEntry[]): Promise<string> {
  return sha256Bytes(utf8(JSON.stringify([documentSha, manifest.source, assets.map((a) => [a.path, a.sha256, a.mime])])));
}

async function storeBytes(env: Env, document: Uint8Array | null, assets: PreparedAsset[]): Promise<string | null> {
  const stored = await Promise.all(assets.map((a) => putContentAddressed(env.BLOBS, "asset", a.bytes, a.mime, a.sha256)));
  void stored;
  return document ? (await putContentAddressed(env.BLOBS, "doc", document, "text/html; charset=utf-8")).sha256 : null;
}

function indexOf(assets: PreparedAsset[]): AssetEntry[] {
  return assets.map(({ path, sha256, size, mime, attachment_id }) => ({ path, sha256, size, mime, ...(attachment_id ? { attachment_id } : {}) }));
}

/**
 * The refusal of a requested slug in use. When the caller's own create holds it, hidden
 * while it seeds its starter rows (src/apps/seeding.ts), the message says so: if that
 * create was cut off, the slug is free again once the cron has purged it.
 */
async function slugTaken(env: Env, slug: string, humanId: string): Promise<RelayError> {
  const message = (await slugHeldBySeeding(env, slug, humanId))
    ? `The slug "${slug}" is held by a create of yours that has not finished writing its starter rows; if it was cut off, the slug is free again within ${SEEDING_FREED_MINUTES} minutes.`
    : `The slug "${slug}" is in use.`;
  return new RelayError("slug_taken", message, { field: "slug" });
}

async function chooseSlug(env: Env, humanId: string, visibility: Visibility, requested: string | undefined, appName: string): Promise<string> {
  if (requested !== undefined) {
    if (visibility === "link") throw new RelayError("slug_not_allowed_for_link", "Link apps get a server-generated slug; drop `slug`.", { field: "slug" });
    validateSlug(requested);
    if (await slugExists(env, requested)) throw await slugTaken(env, requested, humanId);
    return requested;
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = visibility === "link" ? unguessableSlug() : friendlySlug(appName);
    if (!(await slugExists(env, candidate))) return candidate;
  }
  throw new RelayError("internal_error", "Could not find a free slug.");
}

export type CreateResult =
  | { dryRun: true; body: { ok: true; warnings: string[] } }
  | { dryRun: false; body: Record<string, unknown> };

export async function createApp(env: Env, actor: DeployActor, input: CreateInput): Promise<CreateResult> {
  const cfg = config(env);
  if (!actor.ownerHumanId) {
    throw new RelayError("agent_not_claimed", "This agent has no human yet; ask for a claim code and run `service agent claim <code>`.");
  }
  const visibility = input.visibility ?? "private";
  const document = checkDocument(input.html, cfg);
  if (input.slug !== undefined && visibility === "link") {
    throw new RelayError("slug_not_allowed_for_link", "Link apps get a server-generated slug; drop `slug`.", { field: "slug" });
  }
  if (input.slug !== undefined) validateSlug(input.slug);
  let compiled = compile(input.manifest, cfg, visibility, null, input.slug);
  const assets = await prepareAssets(input.assets ?? [], assetLimits(cfg), attachmentResolver(env, actor, null));
  const seedRows = input.input_data === undefined ? null : validateInputData(compiled, input.input_data);

  // A dry run answers what the real deploy would: a full account or a taken slug fail it too.
  const cap = cfg.limits.MAX_APPS_PER_ACCOUNT;
  if ((await countLiveApps(env, actor.ownerHumanId)) >= cap) throw appCapReached(cap);
  if (input.dry_run) {
    if (input.slug !== undefined && (await slugExists(env, input.slug))) throw await slugTaken(env, input.slug, actor.ownerHumanId);
    return { dryRun: true, body: { ok: true, warnings: compiled.warnings } };
  }
  const slug = await chooseSlug(env, actor.ownerHumanId, visibility, input.slug, compiled.app.name);
  // A server-chosen slug is known only now; its origin may not be listed either (a wildcard could cover it).
  if (input.slug === undefined) compiled = compile(input.manifest, cfg, visibility, null, slug);
  const documentSha = (await storeBytes(env, document, assets))!;
  const index = indexOf(assets);
  const now = nowIso();
  const share = visibility === "link" ? await mintShareToken() : null;
  // With starter rows the app is hidden (owned by a placeholder) until they are in (seeding.ts);
  // without, the batch below is the whole create.
  const app: AppRow = {
    id: newAppId(), slug, ownerHumanId: seedRows ? seedingOwner(actor.ownerHumanId) : actor.ownerHumanId, createdByAgentId: actor.agentId, visibility, status: "active",
    currentVersion: 1, timezone: null, shareTokenHash: share?.hash ?? null, createdAt: now, lastActivityAt: now,
    deletedAt: null, statusBeforeDelete: null,
  };
  const version: AppVersionRow = {
    appId: app.id, version: 1, manifestJson: JSON.stringify(compiled.source), documentSha256: documentSha,
    documentBytes: document.byteLength, assetsJson: JSON.stringify(index), sourceHash: await sourceHash(documentSha, compiled, index),
    compat: "new", breaksJson: null, createdByAgentId: actor.agentId, createdAt: now,
  };
  const derived = derivedState(env, app.id, compiled, appCreated(app.id), false);
  let inserted: D1Result[] | null;
  try {
    inserted = await insertAppWithVersion(env, app, version, cap, derived.statements);
  } catch (err) {
    // Two creates racing for one chosen slug: the unique index decides, the loser is told.
    if (input.slug !== undefined && /UNIQUE/i.test(String(err))) throw await slugTaken(env, input.slug, actor.ownerHumanId);
    throw err;
  }
  // Concurrent creates counted the same free slot; the insert re-checks the cap and only one wins it.
  // Nor does it make an app for an account deleted since the caller was checked. A seeding
  // create's insert counts the person's creates still seeding (their placeholder's apps) instead.
  if (!inserted) throw await refusalFor(env, actor.ownerHumanId, seedRows ? seedingCapReached(cap) : appCapReached(cap));
  if (seedRows) await seedThenHandOver(env, app, actor.agentId, seedRows, actor.ownerHumanId, cap);
  const url = appUrl(cfg, slug);
  const webhookSecret = derived.webhookSecret(inserted);
  return {
    dryRun: false,
    body: {
      app_id: app.id, slug, visibility, url, version: 1, created: true,
      ...(share ? { share_url: `${url}#k=${share.token}` } : {}),
      ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
      ...(compiled.warnings.length ? { warnings: compiled.warnings } : {}),
    },
  };
}

/** Refuses a redeploy that makes a field unique while live rows share a value of it. */
async function checkUniqueBackfill(env: Env, app: AppRow, previous: CompiledManifest | null, next: CompiledManifest): Promise<void> {
  const added = Object.values(next.collections).some((c) => c.unique.some((f) => !(previous?.collections[c.name]?.unique ?? []).includes(f)));
  if (!added) return;
  const conflicts = await appStore(env, app.id).uniqueBackfillCheck(JSON.stringify(next.source));
  if (conflicts.length) {
    const first = conflicts[0];
    throw new RelayError("unique_backfill_conflict", `Live rows of "${first.collection}" already share the value "${first.value}" of "${first.field}"; make them distinct before adding unique.`,
      { conflicts });
  }
}

export interface LiveVersion {
  app: AppRow;
  version: AppVersionRow;
}

/**
 * Compiled live manifests, per configuration and (app, version, visibility, timezone): a
 * version's manifest never changes, and compiling one (its schemas' validators included)
 * is the costly part of every lookup that acts on what an app declares, once per webhook
 * batch, members call or console page. Shared read-only, as the store shares its own;
 * bounded, the least recently used going first.
 */
const compiledLiveCache = new WeakMap<Config, BoundedMap<string, CompiledManifest | null>>();
const MAX_COMPILED_LIVE = 256;

/** The manifest the live version was deployed with, compiled under today's limits (null: it no longer compiles). */
export function compileLive(live: LiveVersion, cfg: Config): CompiledManifest | null {
  let cached = compiledLiveCache.get(cfg);
  if (!cached) compiledLiveCache.set(cfg, cached = new BoundedMap(MAX_COMPILED_LIVE));
  const key = [live.app.id, live.version.version, live.app.visibility, live.app.timezone ?? ""].join("\u0000");
  if (cached.has(key)) return cached.get(key) as CompiledManifest | null;
  const compiled = compileLiveUncached(live, cfg);
  cached.set(key, compiled);
  return compiled;
}

function compileLiveUncached(live: LiveVersion, cfg: Config): CompiledManifest | null {
  try {
    return compileFor(JSON.parse(live.version.manifestJson), cfg, { visibility: live.app.visibility, timezone: live.app.timezone, deploying: false });
  } catch {
    // Limits tightened since it was deployed: the gate then compares against nothing,
    // and the new manifest is judged on its own.
    return null;
  }
}

export type RedeployResult =
  | { dryRun: true; body: { ok: boolean; warnings: string[]; compat: "clean" | "forced" | "incompatible"; breaks?: CompatBreak[] } }
  | { dryRun: false; body: Record<string, unknown> };

export async function redeployApp(env: Env, actor: DeployActor, app: AppRow, input: RedeployInput): Promise<RedeployResult> {
  const cfg = config(env);
  if (input.html === undefined && input.manifest === undefined && input.assets === undefined) {
    throw new RelayError("invalid_request", "Send at least one of html, manifest or assets.", { field: "body" });
  }
  if (app.currentVersion === null) throw new RelayError("conflict", "This app has no live version to build on.");
  const current = await getVersion(env, app.id, app.currentVersion);
  if (!current) throw new RelayError("conflict", "This app's live version is missing.");

  const document = input.html === undefined ? null : checkDocument(input.html, cfg);
  const manifestSource = input.manifest === undefined ? JSON.parse(current.manifestJson) : input.manifest;
  const compiled = compile(manifestSource, cfg, app.visibility, app.timezone, app.slug);
  const assets = input.assets === undefined ? null : await prepareAssets(input.assets, assetLimits(cfg), attachmentResolver(env, actor, app.id));

  const previous = compileLive({ app, version: current }, cfg);
  const breaks = previous ? compatGate(previous, compiled).breaks : [];
  const compat = breaks.length === 0 ? "clean" : input.force ? "forced" : "incompatible";
  await checkUniqueBackfill(env, app, previous, compiled);
  if (input.dry_run) {
    return {
      dryRun: true,
      body: { ok: compat !== "incompatible", warnings: compiled.warnings, compat, ...(breaks.length ? { breaks } : {}) },
    };
  }
  if (compat === "incompatible") {
    throw new RelayError("manifest_incompatible_redeploy", `This redeploy would strand rows or widen disclosure (${breaks.length} break${breaks.length === 1 ? "" : "s"}).`, { breaks });
  }

  const documentSha = (await storeBytes(env, document, assets ?? [])) ?? current.documentSha256;
  const index = assets ? indexOf(assets) : (JSON.parse(current.assetsJson) as AssetEntry[]);
  const version: AppVersionRow = {
    appId: app.id, version: app.currentVersion + 1, manifestJson: JSON.stringify(compiled.source), documentSha256: documentSha,
    documentBytes: document?.byteLength ?? current.documentBytes, assetsJson: JSON.stringify(index),
    sourceHash: await sourceHash(documentSha, compiled, index), compat, breaksJson: breaks.length ? JSON.stringify(breaks) : null,
    createdByAgentId: actor.agentId, createdAt: nowIso(),
  };
  const derived = derivedState(env, app.id, compiled, stillLiveAt(app.id, app.currentVersion), true);
  const switched = await insertVersionAndAdvance(env, version, app.currentVersion, derived.statements);
  if (!switched) {
    throw new RelayError("conflict", "Another deploy of this app landed first; fetch the app and try again.", { current_version: app.currentVersion });
  }
  // Calls checked against the previous version are turned away from now on and checked again.
  // Only a hastening: the store also moves on by itself when the first call names the new
  // version, so a crash before this line loses nothing.
  await appStore(env, app.id).advanceVersion(version.version).catch((err) => console.error(`redeploy: store of app ${app.id} not told of version ${version.version}`, errorLogLine(err)));
  const webhookSecret = derived.webhookSecret(switched);
  return {
    dryRun: false,
    body: {
      app_id: app.id, version: version.version, compat,
      ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
      ...(breaks.length ? { breaks } : {}),
      ...(compiled.warnings.length ? { warnings: compiled.warnings } : {}),
    },
  };
}
