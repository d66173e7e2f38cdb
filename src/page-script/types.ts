/**
 * The shape of `window.service` that the inline bootstrap creates and the bundle fills in
 * (WIRE §4.2). Shared by both so the handover between them (the buffered calls and the
 * ready promise kept in a hidden `__svc` slot) is checked by the compiler.
 */

export type SessionKind = "owner" | "member" | "anonymous";
export type Visibility = "private" | "link" | "public";

/** What the server writes into the bootstrap's `data-svc` attribute. */
export interface BootConfig {
  slug: string;
  name: string;
  description: string | null;
  icon: string | null;
  visibility: Visibility;
  /** `{API_ORIGIN}/authorize`: session.login() adds `?app=<slug>&return=<url>`. */
  authorize: string;
  /** Present when some collection has `antiAbuse` and the relay runs Turnstile (challenge.ts). */
  challenge?: ChallengeConfig;
}

/** The bot challenge for anonymous creates and upserts on `antiAbuse` collections. */
export interface ChallengeConfig {
  /** Turnstile's public site key. */
  siteKey: string;
  /** Turnstile's script URL; loaded on the first write that needs a token. */
  script: string;
  /** The `antiAbuse` collections. */
  collections: string[];
}

/** A row stamp (`human`, `agent`, `grant`, `visitor`, `anon`, or a machine kind). */
export interface Author {
  kind: string;
  id: string;
}

/** A row as the page sees it (WIRE §4.2): camelCase, converted from the wire. */
export interface Row {
  key: string;
  data: unknown;
  version: number;
  author: Author;
  createdAt: string;
  updatedAt: string;
}

export type CollectionEvent =
  | { kind: "upsert"; collection: string; row: Row }
  | { kind: "delete"; collection: string; row: { key: string; deletedAt: string } };

/** A change feed entry as the page sees it (`collection`/`key` instead of the wire's `collection_name`/`row_key`). */
export interface PageFeedEntry {
  seq: number;
  op: "create" | "update" | "delete";
  collection: string;
  key: string;
  data: unknown;
  author: Author;
  ts: string;
}

export interface ListOptions {
  where?: unknown[];
  sort?: unknown[];
  limit?: number;
  /** `next_cursor` of the previous page (send the same where/sort again). */
  since?: string;
}

export interface ListPage {
  rows: Row[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface ServiceCollections {
  snapshot(name: string): Row[];
  get(name: string, key: string): Row | undefined;
  count(name: string): Promise<number>;
  list(name: string, options?: ListOptions): Promise<ListPage>;
  on(name: string, handler: (event: CollectionEvent) => void): () => void;
  create(name: string, data: unknown): Promise<Row>;
  upsert(name: string, key: string, data: unknown): Promise<Row>;
  update(name: string, key: string, data: unknown, options?: { ifMatch?: number }): Promise<Row>;
  delete(name: string, key: string, options?: { ifMatch?: number }): Promise<void>;
}

export interface ServiceFeed {
  /** The highest change feed seq applied (memory only). */
  readonly cursor: number;
  on(handler: (entry: PageFeedEntry) => void, options?: { collection?: string }): () => void;
}

export interface Member {
  kind: "human" | "agent";
  id: string;
  displayName: string;
  role?: string;
}

export interface ServiceMembers {
  list(): Promise<Member[]>;
  nameFor(author: Author | null | undefined): string;
}

/** An outbound connection as `connections.set` and `connections.status` answer it (WIRE §2.6's Connection). */
export interface Connection {
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
  /** Where the owner gives an oauth2 connection consent (on the relay's own origin); null for a static one. */
  authorizeUrl: string | null;
}

/** What `connections.set` takes: the fields of a connection create, without its name. */
export interface ConnectionSettings {
  kind?: "static" | "oauth2";
  allowedHost: string;
  headerName?: string;
  headerValue?: string;
  provider?: string;
  label?: string;
  authorizeUrl?: string;
  tokenEndpoint?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string;
  authScheme?: string;
  instanceField?: string;
  authParams?: Record<string, string>;
  tokenParams?: Record<string, string>;
}

/** The owner's (or the owner's agent's) view of the app's outbound connections. */
export interface ServiceConnections {
  /** Creates the connection `name`, or replaces every setting and secret of it. */
  set(name: string, settings: ConnectionSettings): Promise<Connection>;
  /** The connection's status now (an oauth2 token about to expire is refreshed first). */
  status(name: string): Promise<Connection>;
}

/** An in-app notification as `notifications.list` answers it (WIRE §4.3; wire field names). */
export interface InAppNotification {
  id: string;
  subject: string;
  body: string;
  /** A path on this app's origin, or null. */
  link: string | null;
  collection_name: string;
  row_key: string;
  op: "create" | "update";
  created_at: string;
  read_at: string | null;
}

export interface NotificationPage {
  notifications: InAppNotification[];
  has_more: boolean;
}

/** The viewer's notification settings for this app: `notifiable: false` without a person to notify. */
export interface NotificationPreferences {
  notifiable: boolean;
  /** Per channel the app uses (`email`, `inapp`, `push`): whether the viewer muted it. */
  muted: Record<string, boolean>;
}

/** The viewer's notifications in this app (WIRE §4.2, §4.3). */
export interface ServiceNotifications {
  /** Newest first; `before` is the id of the last one of the previous page. */
  list(options?: { limit?: number; unread?: boolean; before?: string }): Promise<NotificationPage>;
  /** How many are unread. */
  count(): Promise<number>;
  /** Marks these ids read, or every one without ids; resolves to how many changed. */
  markRead(ids?: string[]): Promise<number>;
  preferences: {
    /** null when the app declares no notify rule. */
    get(): Promise<NotificationPreferences | null>;
    set(input: { channel: "email" | "inapp" | "push"; muted: boolean }): Promise<NotificationPreferences>;
  };
}

/** One rule's latest task for a row, as `tasks.forRow` answers it (WIRE §4.3 `/_svc/tasks`). */
export interface RowTask {
  task_type: string;
  status: "queued" | "working" | "done" | "failed" | "expired";
  created_at: string;
  updated_at: string;
}

/** What `uploadBlob` answers: the attachment's id and what the relay made of the file. */
export interface UploadedBlob {
  id: string;
  mime: string;
  size: number;
  filename: string | null;
}

/** Files stored with the app (WIRE §4.2). */
export interface ServiceBlobs {
  /** Uploads as the viewer; `collection` lets a visitor upload an image when that collection admits anyone's writes. */
  uploadBlob(file: Blob, opts?: { filename?: string; collection?: string }): Promise<UploadedBlob>;
  /** The attachment's bytes. */
  downloadBlob(id: string): Promise<Uint8Array>;
  /** Offers the attachment to the viewer as a download. */
  saveBlob(id: string, filename?: string): Promise<void>;
}

/** Agent tasks a row fired, so a page can show "an agent is working on this". */
export interface ServiceTasks {
  /** The latest task of each agentTasks rule for a row the viewer can read (never its prompt or report). */
  forRow(collection: string, key: string): Promise<RowTask[]>;
}

/**
 * The browser's push state for this app: `unsupported` (no service workers or Push API,
 * or not a secure origin), `denied` (the viewer blocked notifications), `prompt` (not
 * asked yet: `enable()` will ask), `disabled` (allowed but not subscribed), `enabled`.
 */
export type PushStatus = "unsupported" | "denied" | "prompt" | "disabled" | "enabled";

/** Browser push for the signed-in viewer (WIRE §4.2): a public app with `offline: true` only. */
export interface ServicePush {
  /** Asks for the notification permission (call from a click), subscribes this browser and saves it for the viewer. */
  enable(): Promise<PushStatus>;
  /** This browser's state; never prompts. */
  status(): Promise<PushStatus>;
  /** Deletes the saved subscription and unsubscribes this browser. */
  disable(): Promise<PushStatus>;
}

export interface ServiceSession {
  kind: SessionKind;
  humanId: string | null;
  visitorId: string | null;
  displayName: string | null;
  login(): void;
  logout(): void;
}

export interface ServiceApp {
  slug: string;
  name: string;
  description: string | null;
  icon: string | null;
  visibility: Visibility;
  collections: { name: string; appendOnly: boolean }[];
}

export interface ServiceGlobal extends ServiceBlobs {
  ready: Promise<void>;
  session: ServiceSession;
  app: ServiceApp;
  collections: ServiceCollections;
  feed: ServiceFeed;
  members: ServiceMembers;
  connections: ServiceConnections;
  notifications: ServiceNotifications;
  push: ServicePush;
  tasks: ServiceTasks;
}

/**
 * A call made before the bundle attached: member path (`"collections.create"`) and
 * arguments; `ok`/`no` settle the promise the caller holds; a subscription (`on`) keeps
 * the real unsubscribe in `off` once replayed, and `x` marks one cancelled before that.
 */
export interface BufferedCall {
  n: string;
  a: unknown[];
  ok?: (value: unknown) => void;
  no?: (reason: unknown) => void;
  off?: () => void;
  x?: boolean;
}

/** The bootstrap's handover to the bundle; not enumerable, not part of the public API. */
export interface Internal {
  config: BootConfig;
  queue: BufferedCall[];
  resolve: () => void;
  attached: boolean;
}

export type BootstrappedService = ServiceGlobal & { __svc?: Internal };

declare global {
  interface Window {
    service?: BootstrappedService;
  }
}
