/**
 * `parseManifest`: the one entry point that turns an untrusted manifest document into a
 * `CompiledManifest` or throws ONE RelayError naming the offending path. It fixes the
 * order in which sections are checked (so a manifest with several mistakes always
 * reports the same first one) and computes the manifest-wide facts: deploy warnings,
 * CSP source lists and whether visitors get an identity.
 */
import { RelayError } from "../errors";
import { jsonKind } from "../json-kind";
import { compileApp } from "./app";
import { compileCollection, linkServerSet } from "./collections";
import { buildCsp, compileCapabilities, compileEmbedAncestors, compileHostList } from "./origins";
import { compileRoles, isRowScoped } from "./permissions";
import { at, expectBoolean, expectObject, expectString, fail, isObject, onlyKeys, own, ROOT } from "./read";
import { utf8Bytes } from "../bytes";
import { compileRoutes } from "./routes";
import { compileAgentTasks, compileIngest, compileNotify, compileSchedules, compileWebhooks, type RuleContext } from "./rules";
import {
  DEFAULT_LIMITS, type CompiledCollection, type CompiledManifest, type JsonObject, type ManifestContext, type ManifestLimits,
  type ResolvedLimits,
} from "./types";

const TOP_KEYS = [
  "app", "collections", "roles", "notify", "schedules", "webhooks", "agentTasks", "ingest", "externalHosts", "embeds",
  "embedAncestors", "capabilities", "cdn", "offline", "routes", "settingsCollection",
];

const SCHEMA_URIS = ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"];

export function resolveLimits(limits: ManifestLimits = {}): ResolvedLimits {
  const out = { ...DEFAULT_LIMITS } as Record<string, unknown>;
  for (const [k, v] of Object.entries(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, k)) continue;
    const d = (DEFAULT_LIMITS as unknown as Record<string, unknown>)[k];
    if (typeof v === typeof d && (typeof v !== "number" || Number.isFinite(v))) out[k] = v;
  }
  return out as unknown as ResolvedLimits;
}

/** Builds the limits input from the values `config(env)` already parsed. */
export function manifestLimitsFrom(settings: { limits: Record<string, number>; flags: Record<string, boolean>; development?: boolean }): ManifestLimits {
  return { ...settings.limits, ...settings.flags, development: settings.development ?? false } as ManifestLimits;
}

/**
 * The manifest as a deploy body carries it: a JSON object. Anything else (an array, a
 * string, even the manifest's own JSON text, a number, null) is refused with the
 * manifest's own error, its path `""` naming the manifest as a whole.
 */
export function manifestObject(value: unknown): JsonObject {
  if (!isObject(value)) fail("manifest_invalid", "", `the manifest must be a JSON object (a JSON Schema 2020-12 document), not ${jsonKind(value)}`);
  return value;
}

function readDocument(input: unknown, max: number): JsonObject {
  let text: string;
  if (typeof input === "string") {
    text = input;
  } else {
    try {
      const s = JSON.stringify(input);
      if (s === undefined) return manifestObject(input); // nothing, or a function: refused as what it is
      text = s;
    } catch (err) {
      if (err instanceof RelayError) throw err;
      return fail("manifest_invalid", "", "the manifest is not JSON");
    }
  }
  const bytes = utf8Bytes(text);
  if (bytes > max) fail("manifest_too_large", "", `the manifest is ${bytes} bytes, over MAX_MANIFEST_BYTES (${max})`, { limit: max });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    fail("manifest_invalid", "", "the manifest is not valid JSON");
  }
  return manifestObject(doc);
}

/**
 * Parses, validates and compiles a manifest. `input` is the manifest object (or its JSON
 * text). `limits` carries MAX_* values and operator flags (defaults from src/config.ts);
 * `context` carries deploy facts the manifest cannot know (visibility, timezone, origin).
 */
export function parseManifest(input: unknown, limits: ManifestLimits = {}, context: ManifestContext = {}): CompiledManifest {
  const L = resolveLimits(limits);
  const doc = readDocument(input, L.MAX_MANIFEST_BYTES);

  if (doc.$schema !== undefined && !(typeof doc.$schema === "string" && SCHEMA_URIS.includes(doc.$schema))) {
    fail("manifest_invalid", "$schema", `manifests use JSON Schema 2020-12 ("${SCHEMA_URIS[0]}")`);
  }
  const defs = doc.$defs === undefined ? undefined : expectObject(doc.$defs, "$defs", "manifest_invalid");
  if (doc[ROOT] === undefined) fail("manifest_invalid", ROOT, "is required: the manifest declares the app under x-service-manifest");
  const ext = expectObject(doc[ROOT], ROOT, "manifest_invalid");
  onlyKeys(ext, TOP_KEYS, ROOT, "manifest_invalid");

  const app = compileApp(ext.app);
  const roles = compileRoles(ext.roles);

  const cRoot = at(ROOT, "collections");
  const collections: Record<string, CompiledCollection> = {};
  if (ext.collections !== undefined) {
    const map = expectObject(ext.collections, cRoot, "manifest_invalid");
    const names = Object.keys(map);
    if (names.length > L.MAX_COLLECTIONS_PER_APP) {
      fail("too_many_collections", cRoot, `declares ${names.length} collections; at most MAX_COLLECTIONS_PER_APP (${L.MAX_COLLECTIONS_PER_APP})`, { limit: L.MAX_COLLECTIONS_PER_APP });
    }
    for (const name of names) collections[name] = compileCollection(name, map[name], defs, roles, L, at(cRoot, name));
    linkServerSet(collections, cRoot);
  }

  let settingsCollection: string | null = null;
  if (ext.settingsCollection !== undefined) {
    const sPath = at(ROOT, "settingsCollection");
    settingsCollection = expectString(ext.settingsCollection, sPath, "manifest_invalid");
    const settings = own(collections, settingsCollection);
    if (!settings) fail("manifest_invalid", sPath, `names an undeclared collection "${settingsCollection}"`);
    const write = settings.permissions.write;
    if (write.length !== 1 || write[0].subject !== "owner") fail("manifest_invalid", sPath, `collection "${settingsCollection}" must have write exactly ["owner"]`);
  }

  const cdn = ext.cdn === undefined ? false : expectBoolean(ext.cdn, at(ROOT, "cdn"), "manifest_invalid");
  const offline = ext.offline === undefined ? false : expectBoolean(ext.offline, at(ROOT, "offline"), "manifest_invalid");
  if (offline && cdn) fail("manifest_invalid", at(ROOT, "offline"), "offline cannot be combined with cdn: true");

  const deploying = context.deploying === true;
  const externalHosts = compileHostList(ext.externalHosts, "externalHosts", L.MAX_EXTERNAL_HOSTS, context.appOrigin, at(ROOT, "externalHosts"), deploying);
  const embeds = compileHostList(ext.embeds, "embeds", L.MAX_EMBEDS, context.appOrigin, at(ROOT, "embeds"), deploying);
  const embedAncestors = compileEmbedAncestors(ext.embedAncestors, L.MAX_EMBEDS, at(ROOT, "embedAncestors"), deploying);
  const capabilities = compileCapabilities(ext.capabilities, at(ROOT, "capabilities"));

  const ruleCtx: RuleContext = { collections, roles, settingsCollection, offline, limits: L, context };
  const notify = compileNotify(ext.notify, ruleCtx, ROOT);
  const schedules = compileSchedules(ext.schedules, ruleCtx, ROOT);
  const webhooks = compileWebhooks(ext.webhooks, ruleCtx, ROOT);
  const agentTasks = compileAgentTasks(ext.agentTasks, ruleCtx, ROOT);
  const ingest = compileIngest(ext.ingest, ruleCtx, ROOT);
  const routes = compileRoutes(ext.routes, collections, ROOT);

  return {
    format: 1,
    source: doc,
    app,
    collections,
    roles,
    notify,
    schedules,
    webhooks,
    agentTasks,
    ingest,
    externalHosts,
    embeds,
    embedAncestors,
    capabilities,
    cdn,
    offline,
    routes,
    settingsCollection,
    csp: buildCsp(externalHosts, embeds, embedAncestors, cdn, capabilities),
    visitorIdentity: needsVisitorIdentity(collections),
    warnings: manifestWarnings(collections, schedules.length > 0, context),
  };
}

function needsVisitorIdentity(collections: Record<string, CompiledCollection>): boolean {
  return Object.values(collections).some((c) => {
    const p = c.permissions;
    return p.write.some((s) => s.who === "anyone") &&
      [...p.read, ...p.update, ...p.delete].some((s) => s.who === "anyone" && isRowScoped(s));
  });
}

/** The deploy `warnings[]` producers of WIRE §6.5 that depend on the manifest alone. */
function manifestWarnings(collections: Record<string, CompiledCollection>, hasSchedules: boolean, context: ManifestContext): string[] {
  const warnings: string[] = [];
  if (hasSchedules && !context.timezone) {
    warnings.push("schedules: the app has no timezone, so schedules scan at 08:00 UTC; set one with PATCH /v1/apps/:id { \"timezone\": \"<IANA name>\" }");
  }
  for (const c of Object.values(collections)) {
    const p = c.permissions;
    if (p.countRead?.some((s) => s.subject === "anyone") && p.read.some(isRowScoped)) {
      warnings.push(`collections.${c.name}: countRead ["anyone"] lets anyone count rows that the row-scoped read list hides from them`);
    }
  }
  return warnings;
}
