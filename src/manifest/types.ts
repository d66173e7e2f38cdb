/**
 * The shapes the manifest module hands to the rest of the relay. Everything here is plain
 * JSON data (no functions, no class instances) so a Durable Object can store a compiled
 * manifest, send it over RPC, or rebuild it from the manifest JSON of any version; the
 * row validators that need real objects are built lazily from it (see schema.ts).
 */

/** Numeric limits and operator flags the manifest grammar depends on. Every field is
 *  optional; a missing one takes the default of src/config.ts. */
export interface ManifestLimits {
  MAX_COLLECTIONS_PER_APP?: number;
  MAX_EMBEDS?: number;
  MAX_EXTERNAL_HOSTS?: number;
  MAX_MANIFEST_BYTES?: number;
  MAX_SCHEMA_BYTES?: number;
  MAX_ROW_DATA_BYTES?: number;
  MAX_DOCUMENT_ROW_DATA_BYTES?: number;
  SCHEDULES_MAX_RULES?: number;
  INGEST_MAX_HOOKS?: number;
  NOTIFY_EXTERNAL_ENABLED?: boolean;
  NOTIFY_INAPP_ENABLED?: boolean;
  NOTIFY_PUSH_ENABLED?: boolean;
  /** Whether the relay can verify bot-challenge tokens; `antiAbuse` is refused when off. */
  ANTI_ABUSE_ENABLED?: boolean;
  /** Development mode: webhook urls may then be loopback http (CONTRACT §3). */
  development?: boolean;
}

export type ResolvedLimits = Required<ManifestLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = {
  MAX_COLLECTIONS_PER_APP: 50,
  MAX_EMBEDS: 50,
  MAX_EXTERNAL_HOSTS: 50,
  MAX_MANIFEST_BYTES: 262_144,
  MAX_SCHEMA_BYTES: 65_536,
  MAX_ROW_DATA_BYTES: 65_536,
  MAX_DOCUMENT_ROW_DATA_BYTES: 262_144,
  SCHEDULES_MAX_RULES: 10,
  INGEST_MAX_HOOKS: 10,
  NOTIFY_EXTERNAL_ENABLED: false,
  NOTIFY_INAPP_ENABLED: false,
  NOTIFY_PUSH_ENABLED: false,
  ANTI_ABUSE_ENABLED: true,
  development: false,
};

export type Visibility = "private" | "link" | "public";

/** Facts about the deploy that the manifest alone cannot know. All optional: a check that
 *  needs a missing fact is skipped (and left to the deploy route). */
export interface ManifestContext {
  visibility?: Visibility;
  /** The app's IANA timezone; `null`/absent makes schedules produce a warning. */
  timezone?: string | null;
  /** The app's own origin (e.g. `https://notes.apps.example`), refused in externalHosts/embeds. */
  appOrigin?: string;
  /**
   * The manifest is being deployed, not a stored one loaded again: checks added after
   * manifests were first accepted (page origins on the public internet only) apply then.
   */
  deploying?: boolean;
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * One entry of a permission list, parsed. `who` is the population the subject names;
 * `scope` narrows it to rows: `all` (every row), `creator` (rows the caller created),
 * `editor` (rows the caller wrote last: `editor`, `author`, `<role>:own`), `relation`
 * (rows whose relation field names the caller).
 */
export interface Subject {
  /** The subject exactly as written in the manifest. */
  subject: string;
  who: "owner" | "member" | "anyone" | "role";
  role?: string;
  scope: "all" | "creator" | "editor" | "relation";
  relation?: string;
}

export interface CollectionPermissions {
  read: Subject[];
  write: Subject[];
  /** Effective update list: the declared one, or `write` when `update` was omitted. */
  update: Subject[];
  updateInherited: boolean;
  delete: Subject[];
  /** `null` when the collection did not opt into counting. */
  countRead: Subject[] | null;
}

export interface CompiledSchema {
  /** The `$ref` as written, e.g. `#/$defs/Note`. */
  ref: string;
  /** The `$defs` entry name, e.g. `Note`. */
  def: string;
  /** The row schema itself (a copy of the `$defs` entry). */
  schema: JsonObject;
  /** Top-level `properties` names, in declaration order. */
  properties: string[];
  /** Top-level `required` names. */
  required: string[];
}

export interface Relation {
  field: string;
  /** `writer`: only the row's creator may change the field later. `null` when undeclared. */
  set: "caller" | "writer" | null;
}

export type ServerSetRule =
  | { kind: "lookup"; from: string; keyField: string; take: string }
  | { kind: "product"; operands: string[] }
  | { kind: "sum"; operands: string[] };

export interface CompiledCollection {
  name: string;
  schema: CompiledSchema | null;
  permissions: CollectionPermissions;
  /** `true` for `appendOnly: true` and for `{ except: [...] }`. */
  appendOnly: boolean;
  /** Subjects still allowed to update/delete on an append-only collection (only `owner`). */
  appendOnlyExcept: string[];
  unique: string[];
  relations: Record<string, Relation>;
  keyClaim: "free" | "server" | "caller";
  /** Declared immutable fields plus every serverSet lookup's keyField. */
  immutable: string[];
  serverSet: Record<string, ServerSetRule>;
  retention: { maxRows: number | null; maxAgeDays: number | null } | null;
  mirror: "auto" | "eager" | "server";
  anonWriteBudget: { perIpPerDay: number; perAppPerDay: number } | null;
  /** `challenge` (spec) and `turnstile` (wire) both compile to `turnstile`. */
  antiAbuse: "turnstile" | null;
  seedOnInstall: boolean;
  storage: "default" | "document";
  /** Row `data` byte cap: MAX_ROW_DATA_BYTES, or MAX_DOCUMENT_ROW_DATA_BYTES with storage document. */
  maxRowBytes: number;
}

export interface CompiledRole {
  label: string;
  description: string | null;
  includes: string[];
  /** The role itself plus every role reachable through `includes`, sorted. */
  expands: string[];
}

export type AuthorKind = "human" | "agent" | "grant" | "visitor" | "anon" | "service" | "hook" | "system";

export type LevelOp = "equals" | "notEquals" | "in" | "notIn" | "gt" | "lt" | "gte" | "lte";
export type Scalar = string | number | boolean;

export type Condition =
  | { kind: "level"; field: string; op: LevelOp; value: Scalar | Scalar[] }
  | { kind: "edge"; field: string; op: "changedTo"; value: Scalar }
  | { kind: "authorKind"; op: "in" | "notIn"; kinds: AuthorKind[] };

export type NotifyChannel = "email" | "inapp" | "push";

export interface NotifyRule {
  /** Stable identity of the rule (a hash of its normalised fields). */
  id: string;
  index: number;
  on: "create" | "update";
  collection: string;
  /** Targets as written: owner, members, submitter, author, creator, role:<r>, field:<relation>. */
  to: string[];
  subject: string;
  body: string;
  when: Condition | null;
  channels: NotifyChannel[];
  submitterEmailField: string | null;
  excludeActor: boolean;
  link: string | null;
}

export type ScheduleAction =
  | { kind: "email"; to: ("owner" | "members")[]; subject: string; body: string }
  | { kind: "webhook"; url: string | null; urlFromSetting: string | null; connection: string | null; bodyTemplate: string | null };

export interface ScheduleRule {
  id: string;
  index: number;
  collection: string;
  dateField: string;
  offsetDays: number;
  when: Condition | null;
  action: ScheduleAction;
}

export interface WebhookRule {
  id: string;
  index: number;
  on: "create" | "update";
  collection: string;
  when: Condition | null;
  url: string | null;
  urlFromSetting: string | null;
  connection: string | null;
  bodyTemplate: string | null;
  machineAuthorKinds: ("hook" | "service")[];
}

export interface AgentTaskRule {
  id: string;
  index: number;
  on: "create" | "update";
  collection: string;
  when: Condition | null;
  taskType: string;
  prompt: string;
  /** Collections the task may read: declared `reads` plus `writes` (writes imply read). */
  reads: string[];
  writes: string[];
  ttlSeconds: number | null;
  leaseSeconds: number | null;
  machineAuthorKinds: ("hook" | "service")[];
}

export interface IngestRule {
  name: string;
  collection: string;
  mode: "append" | "upsert";
  upsertOn: string | null;
  /** target field → dot-path into the body; `null` stores `{ hook, payload, receivedAt }`. */
  map: Record<string, string> | null;
  dedupeKey: { kind: "path"; path: string } | { kind: "header"; header: string } | null;
  handshake: "echo" | null;
  verify: { scheme: "github" } | null;
  wake: boolean;
}

export interface RouteRule {
  path: string;
  /** The path with its parameter name erased (`/p/:`), unique per manifest. */
  shape: string;
  param: string;
  collection: string;
  matchOn: string;
  title: string;
  description: string | null;
  summary: string[];
  schemaType: "Product" | "Article" | "Event" | "Offer" | null;
  indexable: boolean;
}

/** Origin lists the serving layer turns into the page's CSP and Permissions-Policy. */
export interface CspSources {
  /** `'self'` plus externalHosts. */
  connectSrc: string[];
  /** embeds (empty means `'none'`). */
  frameSrc: string[];
  /** embedAncestors (empty means `'none'`). */
  frameAncestors: string[];
  /** `["https:"]` when cdn is on, else empty. */
  scriptSrcExtra: string[];
  styleSrcExtra: string[];
  referrerPolicy: "no-referrer" | "strict-origin-when-cross-origin";
  /** Permissions-Policy features switched from denied to `self`. */
  permissionsAllow: string[];
}

export interface AppIdentity {
  name: string;
  description: string | null;
  icon: string | null;
  indexable: boolean;
  ogImage: string | null;
}

export interface CompiledManifest {
  /** Version of this compiled shape; bump when it changes incompatibly. */
  format: 1;
  /** The manifest document exactly as deployed (a copy). */
  source: JsonObject;
  app: AppIdentity;
  collections: Record<string, CompiledCollection>;
  roles: Record<string, CompiledRole>;
  notify: NotifyRule[];
  schedules: ScheduleRule[];
  webhooks: WebhookRule[];
  agentTasks: AgentTaskRule[];
  ingest: IngestRule[];
  externalHosts: string[];
  embeds: string[];
  embedAncestors: string[];
  capabilities: string[];
  cdn: boolean;
  offline: boolean;
  routes: RouteRule[];
  settingsCollection: string | null;
  csp: CspSources;
  /** Some collection lets `anyone` write and scopes read/update/delete to the writer, so
   *  public and link apps mint a visitor identity (WIRE §5.2). */
  visitorIdentity: boolean;
  /** Deploy `warnings[]` entries this manifest produces. */
  warnings: string[];
}
