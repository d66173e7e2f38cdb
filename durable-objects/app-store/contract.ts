/**
 * The AppStore's contract: the only module of `durable-objects/app-store/` that the rest of
 * the relay imports (a test fails when anything else crosses that line). It says what the
 * Worker and the store exchange and nothing about how either side works: the context every
 * call carries, the store's RPC interface and the shapes it answers with, the hand-off of a
 * feed socket, one `Outcome` type with its conversions to and from catalogue errors, and
 * the marker of a call turned away because access changed while it was being checked.
 *
 * Nothing here knows HTTP: a route turns an Outcome into a response, the store turns a
 * thrown catalogue error into an Outcome (exception classes do not survive RPC).
 */
import { RelayError, type ErrorCode } from "../../src/errors";
import type { Author, Principal } from "../../src/permissions";
import type { JsonValue } from "../../src/manifest";
import type { EffectKind } from "../../src/rules/match";

import type { AppStore } from "./app-store";

export type { AppStore };

// ---- outcomes ----

/** A catalogue error as plain data, the way it crosses RPC. */
export interface Failure {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: Failure };

/** A catalogue error as plain data. */
export function failureOf(err: RelayError): Failure {
  return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
}

/** The catalogue error a failure stands for. */
export function errorOf(failure: Failure): RelayError {
  return new RelayError(failure.code, failure.message, failure.details);
}

/** A thrown catalogue error as a failed Outcome; anything else is thrown again. */
function failed(err: unknown): { ok: false; error: Failure } {
  if (err instanceof RelayError) return { ok: false, error: failureOf(err) };
  throw err;
}

/** Runs `work`, answering a thrown catalogue error as a failed Outcome; anything else still throws. */
export async function attempt<T>(work: () => Promise<T> | T): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    return failed(err);
  }
}

/** `attempt` for synchronous work. */
export function settle<T>(work: () => T): Outcome<T> {
  try {
    return { ok: true, value: work() };
  } catch (err) {
    return failed(err);
  }
}

/** The value of a successful Outcome; a failed one is thrown as its catalogue error. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw errorOf(outcome.error);
}

// ---- access that changed while a call was checked ----

/** The store's refusal of a call whose access changed after the Worker checked it; the Worker checks again and resends once. */
export const STALE_ACCESS = { code: "conflict", reason: "access_changed" } as const;

export function staleAccess(): RelayError {
  return new RelayError(STALE_ACCESS.code, "The app or your access to it changed while this request was being checked; nothing was done. Send it again.", { reason: STALE_ACCESS.reason });
}

/** Whether a store answer is that refusal (anything that is not a failed Outcome is not). */
export function isStaleAccess(outcome: unknown): boolean {
  if (typeof outcome !== "object" || outcome === null || (outcome as Outcome<unknown>).ok !== false) return false;
  const { error } = outcome as Extract<Outcome<unknown>, { ok: false }>;
  return error?.code === STALE_ACCESS.code && error.details?.reason === STALE_ACCESS.reason;
}

// ---- what every call carries ----

/** The outcome of the bot challenge the Worker checked, when the request carried a token. */
export type Challenge = "verified" | "absent" | "failed";

/** What the Worker tells the store on every call: which app and version, and who asks. */
export interface CallContext {
  appId: string;
  version: number;
  principal: Principal;
  challenge?: Challenge;
  /**
   * When the Worker began reading who the caller is (ms since the epoch), on routes that
   * resend a call the store turns away: the store then refuses the call if the app has a
   * newer live version, or if a withdrawal reaching the principal was recorded since,
   * answering STALE_ACCESS instead of acting on stale authority.
   */
  checkedAt?: number;
}

/**
 * How deeply row data may nest. Deeper values overflow the stack when they cross RPC and
 * are past what SQLite's JSON functions read (a stored one would break every query of
 * its collection), so the Worker refuses them before the call and the store again.
 */
export const MAX_DATA_DEPTH = 100;

/** Whether a JSON value nests deeper than `limit` arrays/objects (stops looking as soon as it does). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit <= 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => nestsDeeperThan(child, limit - 1));
}

// ---- what the store answers with ----

/** A live row on the wire: WIRE §2.14 plus CONTRACT §6's creator and editor. */
export interface RowView {
  key: string;
  data: JsonValue;
  version: number;
  author: Author;
  creator: Author;
  editor: Author;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface DeletedRowView {
  key: string;
  data: JsonValue;
  version: number;
  author: Author | null;
  creator: Author;
  created_at: string;
  deleted_at: string;
  recoverable_until: string;
  purged: boolean;
}

export interface RowPage {
  rows: RowView[];
  next_cursor: string | null;
  has_more: boolean;
}

/** WIRE §2.4's FeedEntry, identical over long-poll and socket. */
export interface FeedEntry {
  seq: number;
  op: "create" | "update" | "delete";
  collection_name: string;
  row_key: string;
  row_version: number | null;
  data: JsonValue;
  author: Author;
  ts: string;
  /** Present on the audited delete entry a purge writes. */
  purged?: true;
}

export type FeedPage = { entries: FeedEntry[]; cursor: number; truncated: boolean };

export interface RetentionAxes {
  maxRows: number | null;
  maxAgeDays: number | null;
}

export interface RetentionView {
  effective: RetentionAxes;
  authorDefault: RetentionAxes;
  override: RetentionAxes;
  wouldPrune: number;
}

export interface BatchCreateInput {
  rows: { key?: string; data: unknown }[];
  on?: string;
  emitEffects?: boolean;
  suppress?: EffectKind[];
}

/** One row of a batch: its index in the call, and the key written or why it was not. */
export type BatchItem = { index: number } & Outcome<string>;

export interface AppStoreUsage {
  rowCount: number;
  storageBytes: number;
}

/**
 * A live row as an app export carries it (src/apps/archive): its collection, key, data,
 * version and stamps exactly as stored. An import writes it back as it was, stamps included.
 */
export interface PortableRow {
  collection: string;
  key: string;
  data: JsonValue;
  version: number;
  creator: Author;
  editor: Author;
  created_at: string;
  updated_at: string;
}

/** One page of an export's rows, in storage order; `next_after` resumes after the last (null: done). */
export interface PortablePage {
  rows: PortableRow[];
  next_after: number | null;
}

// ---- feed sockets ----

/** The subprotocol the relay answers a feed socket with; never one that carries a credential. */
export const SOCKET_PROTOCOL = "service.v1";

/** The close code for a socket whose credential expired (app session, grant link, preview token): reconnect with a fresh one. */
export const EXPIRED_CLOSE_CODE = 4001;

/** A `hello` frame without its `seq` (the store adds the feed head at accept time). */
export interface HelloFacts {
  app: {
    slug: string;
    name: string;
    description: string | null;
    icon: string | null;
    visibility: "private" | "link" | "public";
    collections: { name: string; appendOnly: boolean }[];
  };
  session: { kind: "owner" | "member" | "anonymous"; humanId: string | null; visitorId: string | null };
  auth: { authorize_url: string };
}

/** What the Worker hands the store with an upgrade. */
export interface SocketHandoff {
  appId: string;
  version: number;
  principal: Principal;
  hello: HelloFacts;
  /** When the credential the socket was opened with stops holding (ms since the epoch), if it expires. */
  expiresAt?: number;
  /**
   * The preview token that let this viewer into a private app (its id, not the secret), so
   * revoking the token can find the socket: the principal of such a viewer is an ordinary
   * anonymous or visitor one and does not say how it got in.
   */
  previewTokenId?: string;
  /** When the Worker began reading the caller's access (ms since the epoch); a withdrawal recorded since may have been missed. */
  checkedAt?: number;
}

/** The header the hand-off rides in. The store trusts it only because the Worker is the only way in. */
const SOCKET_HANDOFF_HEADER = "x-svc-internal-socket";

/**
 * The request the Worker forwards to the store for an upgrade: nothing the client sent,
 * only the upgrade and the hand-off, so a client can never speak the hand-off itself.
 */
export function socketUpgrade(handoff: SocketHandoff): Request {
  return new Request("https://app-store.internal/_svc/ws", {
    headers: { Upgrade: "websocket", [SOCKET_HANDOFF_HEADER]: encodeURIComponent(JSON.stringify(handoff)) },
  });
}

/** The hand-off of a forwarded upgrade, or null when the request is not one. */
export function readSocketUpgrade(request: Request): SocketHandoff | null {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
  try {
    const handoff = JSON.parse(decodeURIComponent(request.headers.get(SOCKET_HANDOFF_HEADER) ?? "")) as SocketHandoff;
    if (typeof handoff.appId !== "string" || !Number.isSafeInteger(handoff.version) || typeof handoff.principal?.kind !== "string") return null;
    return handoff;
  } catch {
    return null;
  }
}

/**
 * The store answers an upgrade it refuses (the app has no such version, access changed
 * meanwhile…) with the failure as JSON instead of the upgrade; the Worker throws it as its
 * catalogue error.
 */
export function socketRefused(failure: Failure): Response {
  return Response.json(failure);
}

/** The failure the store answered an upgrade with, or null when the answer is the upgrade. */
export async function socketRefusal(answer: Response): Promise<Failure | null> {
  if (answer.status === 101) return null;
  return (await answer.json()) as Failure;
}

/**
 * Whom a withdrawal reaches: one person's principals (owner or member), one agent's, the
 * holders of one grant link (whatever holder credential each was minted), or the viewers
 * one preview token let in. No selector: everyone.
 */
export type SocketSelector = { humanId: string } | { agentId: string } | { grantLinkId: string } | { previewTokenId: string };

/** Why every socket of the app is being closed (the Worker decides; see closeWatchers). */
export type CloseReason = "dormant" | "suspended" | "reconnect";

// ---- the effect outbox (outbox.ts) ----

/** The queue message that points at one outbox entry (src/effects/messages.ts reads it). */
export interface OutboxPointer {
  /** `<app id>:<entry id>`: the entry's identity across redeliveries. */
  outbox_id: string;
  app_id: string;
  entry_id: number;
  kind: EffectKind;
  rule_id: string;
}

/** The change an outbox entry records, as JSON in its payload: what the engines build their messages from. */
export interface EffectChange {
  seq: number;
  op: "create" | "update";
  collection: string;
  key: string;
  version: number;
  data: JsonValue;
  author: Author;
  /**
   * Who created the row (the author of a create). Absent from entries recorded before it
   * was added (the payload is JSON, so no store schema step): readers fall back then.
   */
  creator?: Author;
  created_at: string;
  /** The write's time (the row's updated_at). */
  ts: string;
  /** The writer asked to keep this kind of effect quiet (a batch import): recorded, not acted on. */
  suppressed: boolean;
}

/** An entry as the consumer reads it: `payload` is the EffectChange recorded with the row (JSON). */
export interface OutboxEntryView {
  entry_id: number;
  kind: EffectKind;
  rule_id: string;
  payload: string;
  created_at: string;
}

// ---- inbound hooks (src/effects/ingest/) ----

/**
 * An inbound hook's write: no principal, since a hook passes no permission list (its URL
 * secret, and signature when the rule asks for one, are its authority); the row is
 * stamped `{ kind: "hook", id: <hook name> }`. `suppress` keeps effect kinds quiet.
 */
export interface HookWriteCall {
  appId: string;
  version: number;
  hook: string;
  suppress?: EffectKind[];
}

/** `key` is the delivery's id (a create lands there, so a retaken delivery writes once); `upsertOn` names the rule's unique field. */
export interface HookWriteInput {
  key: string;
  data: JsonValue;
  upsertOn: string | null;
  ifMatch?: number;
}

// ---- the RPC surface ----

/**
 * The store's RPC surface as the Worker sees it. The class implements it, so the two
 * cannot drift; the Worker's stub is typed with it (workerd's generic RPC typing of
 * recursive JSON results is too deep for the compiler).
 */
export interface AppStoreApi {
  listRows(call: CallContext, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }): Promise<Outcome<RowPage>>;
  getRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>>;
  countRows(call: CallContext, collection: string): Promise<Outcome<number>>;
  createRow(call: CallContext, collection: string, input: { data: unknown; key?: string; on?: string }): Promise<Outcome<{ row: RowView; deduped?: true; created: boolean }>>;
  updateRow(call: CallContext, collection: string, key: string, input: { data: unknown; if_match?: number }): Promise<Outcome<RowView>>;
  deleteRow(call: CallContext, collection: string, key: string, input: { if_match?: number }): Promise<Outcome<null>>;
  purgeRow(call: CallContext, collection: string, key: string): Promise<Outcome<null>>;
  restoreRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>>;
  deletedRows(call: CallContext, collection: string, input: { before?: string; limit: number }): Promise<Outcome<{ rows: DeletedRowView[]; next_before: string | null }>>;
  /** An inbound hook's write (HookWriteCall): created at the key, or the upsert's row updated. */
  hookWrite(call: HookWriteCall, collection: string, input: HookWriteInput): Promise<Outcome<{ row: RowView; created: boolean }>>;
  /** Per-row outcomes; a bad row never aborts the others. An undeclared collection fails the whole call. */
  batchCreate(call: CallContext, collection: string, input: BatchCreateInput): Promise<Outcome<BatchItem[]>>;
  batchDelete(call: CallContext, collection: string, keys: string[]): Promise<Outcome<BatchItem[]>>;
  /** Entries after `since` the caller may read, held open up to `waitMs` when caught up. */
  feed(call: CallContext, since: number, limit: number, waitMs: number, collections?: string[]): Promise<Outcome<FeedPage>>;
  getRetention(call: CallContext, collection: string): Promise<Outcome<RetentionView>>;
  setRetention(call: CallContext, collection: string, patch: Partial<RetentionAxes>): Promise<Outcome<RetentionView>>;
  /** Live rows that a redeploy to `manifestJson` would leave sharing a newly unique value. */
  uniqueBackfillCheck(manifestJson: string): Promise<{ collection: string; field: string; value: string }[]>;
  /** Starter rows of a new app (`input_data`), all in one transaction: every row or none. */
  seed(call: CallContext, rows: Record<string, { key?: string; data: unknown }[]>): Promise<Outcome<{ count: number }>>;
  usage(): Promise<AppStoreUsage>;
  /** Export (owner or agent only): live rows of every collection after `after` in storage order, at most `limit`. */
  exportRows(call: CallContext, after: number, limit: number): Promise<Outcome<PortablePage>>;
  /** Import (owner or agent only): rows written back with their keys, versions and stamps, all in one transaction; no effects. */
  importRows(call: CallContext, rows: PortableRow[]): Promise<Outcome<{ count: number }>>;
  /**
   * The effect consumer's side of the outbox (outbox.ts): the entries its queue pointers
   * name that are still unsettled, and settling them once their work is recorded in D1.
   */
  outboxEntries(entryIds: number[]): Promise<OutboxEntryView[]>;
  settleOutbox(entryIds: number[]): Promise<void>;
  /** Purge: every row, feed entry and alarm of the app is gone for good. */
  destroy(): Promise<void>;
  schemaVersion(): Promise<number>;
  /**
   * Ends the app feed sockets — all (the app went dormant or suspended, its visibility
   * changed), or those `only` selects: one person's, one grant link's holders', one preview
   * token's viewers' (their access changed); returns how many.
   */
  closeWatchers(reason: CloseReason, only?: SocketSelector): Promise<number>;
  /** A redeploy made `version` live: calls checked against an older one are turned away (see CallContext.checkedAt). */
  advanceVersion(version: number): Promise<void>;
}

/** The app's store, typed by its declared RPC surface. */
export function appStoreOf(namespace: DurableObjectNamespace<AppStore>, appId: string): AppStoreApi {
  return namespace.get(namespace.idFromName(appId)) as unknown as AppStoreApi;
}

/** The app's store as a fetcher, for forwarding a feed socket upgrade (`socketUpgrade`). */
export function appStoreFetcher(namespace: DurableObjectNamespace<AppStore>, appId: string): { fetch(request: Request): Promise<Response> } {
  return namespace.get(namespace.idFromName(appId));
}
