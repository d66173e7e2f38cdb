/**
 * Watchers: the app feed sockets (WIRE §3.1) of one AppStore, on the Hibernation API
 * (DESIGN §3 step 3, §5.6). The Worker authenticates the upgrade, resolves the caller into
 * a Principal and forwards the request with that principal in an internal header; this
 * module accepts the socket, keeps everything it needs to know about it in the socket's
 * attachment (so the object may hibernate and wake with no memory of it), greets it with
 * `hello`, answers `sub {since}` with `batch` pages of the entries that socket may read,
 * and after every commit pushes the new entries to each live socket, filtered per reader.
 *
 * Sockets are tagged with the manifest version they were accepted under and with each
 * collection their principal could read then (or `c:*` past the tag budget), so a commit
 * only looks at the sockets that can possibly care. The fan-out runs on the turn after the
 * commit, once for all the writes committed meanwhile, so a write's answer never waits for
 * it; sends are synchronous (workerd buffers them), so a slow watcher never holds up a
 * write. Readers who read the same rows form a reader class (fanout.ts): each class is
 * filtered once and each frame serialised once per class, not once per socket.
 *
 * A socket's principal is fixed when it connects, so access withdrawn later reaches it in
 * two ways: a credential that expires (app session, grant link, preview token) is carried
 * in the attachment and the socket is closed once that time has passed — by the store's
 * alarm, set for the soonest expiry, even when the socket is idle, and in any case before
 * anything else is sent to it; and the Worker closes the sockets a withdrawal touches (`closeAll`
 * with a `SocketSelector`: one person's, one grant link's holders, one preview token's
 * viewers) so they reconnect and are judged afresh. Such a close is also remembered for a
 * minute, because an upgrade the Worker checked just before the withdrawal may reach the
 * store just after the close ran: the hand-off says when the Worker began reading access,
 * and a socket whose access was withdrawn since then is closed (1012) on arrival.
 */
import type { CompiledManifest } from "../../src/manifest";
import { authorize, type Principal } from "../../src/permissions";
import { attempt, EXPIRED_CLOSE_CODE, type CloseReason, type Outcome, type SocketHandoff, type SocketSelector } from "./contract";
import { headSeq, readFeed, type HeldEntry } from "./feed";
import { Fanout, FRAME_BYTES, ReadPlan } from "./fanout";
import { visibleEntries } from "./visibility";
import { reaches, type Withdrawals } from "./withdrawals";

/**
 * Per-socket state, in the socket's attachment (at most 2 KiB; survives hibernation).
 */
interface SocketState {
  appId: string;
  /** The manifest version the socket was accepted under. */
  version: number;
  principal: Principal;
  /** The cursor the socket's last `sub` brought it to. */
  cursor: number;
  /**
   * Caught up, so live entries are pushed to it: false until its first complete `sub`, and
   * while it pages through a truncated backlog, so pushed entries can never overtake the
   * pages it still asks for.
   */
  live: boolean;
  /** When its credential expires: past it, the socket is closed instead of served. */
  expiresAt?: number;
  /** The id of the preview token it was admitted with, if any. */
  previewTokenId?: string;
}

export interface WatchHost {
  /** The compiled manifest of `version`, or of the live version when that is newer (loaded from D1 once per version). */
  load(appId: string, version: number): Promise<CompiledManifest>;
  /** The newest manifest the store has loaded, if any. */
  current(): { version: number; manifest: CompiledManifest } | null;
  /** Wakes the store (its alarm) no later than `at` (ms since the epoch), to close sockets expiring then. */
  expiresBy(at: number): Promise<void>;
  /** The store's log of withdrawals: every targeted close is recorded there. */
  withdrawals: Withdrawals;
}

/** A commit this soon (ms) after the last fan-out is part of a burst: its entries go out with the burst's, on the next turn. */
const BURST_MS = 5;
/** Entries per `sub` page. */
const SUB_PAGE_ENTRIES = 500;
/** Read plans kept for the live manifest version; past this many (readers come and go) they are dropped and rebuilt as needed. */
const MAX_READ_PLANS = 10_000;
/** Tags a socket may carry (workerd allows 10): the version tag plus up to this many collections. */
const COLLECTION_TAGS = 8;
const ANY_COLLECTION = "c:*";

const versionTag = (version: number) => `v:${version}`;
const collectionTag = (name: string) => `c:${name}`;

/** Principals that read the same rows, whatever address they call from. */
function readerKey(principal: Principal): string {
  const { ip: _ip, ...rest } = principal as Principal & { ip?: string };
  return JSON.stringify(rest);
}

function attachedState(ws: WebSocket): SocketState | null {
  try {
    const state = ws.deserializeAttachment() as SocketState | null;
    return state && typeof state === "object" && typeof state.appId === "string" ? state : null;
  } catch {
    return null;
  }
}

function send(ws: WebSocket, frame: string): void {
  try {
    ws.send(frame);
  } catch {
    // Closing or closed: its close handler tidies up.
  }
}

function errorFrame(code: string, message: string): string {
  return JSON.stringify({ type: "error", error: { code, message } });
}

/** What the store keeps in memory about a socket (the attachment stays the truth). */
interface KnownSocket {
  state: SocketState;
  /** The reader key (`readerKey`): sockets with the same one share a read plan. */
  reader: string;
  tags?: string[];
  plan?: ReadPlan;
}

export class Watchers {
  /**
   * The attachment of each socket as last written, with its reader key, so a fan-out to a
   * thousand sockets does not deserialise a thousand attachments. The attachment stays the
   * truth: after hibernation this map starts empty and is refilled from it.
   */
  private readonly known = new WeakMap<WebSocket, KnownSocket>();
  /** Read plans by reader key, all of the manifest version `plansVersion`: one per reader, not per socket. */
  private readonly plans = new Map<string, ReadPlan>();
  private plansVersion = 0;
  /** Committed entries not yet pushed (see `afterCommit`). */
  private pending: { entries: HeldEntry[]; timer: ReturnType<typeof setTimeout> | undefined } | null = null;
  /** When the last fan-out ran (ms since the epoch): a commit soon after it joins the next turn's. */
  private lastFlushAt = 0;

  constructor(private readonly ctx: DurableObjectState, private readonly host: WatchHost) {}

  private knownOf(ws: WebSocket): KnownSocket | null {
    const hit = this.known.get(ws);
    if (hit) return hit;
    const state = attachedState(ws);
    if (!state) return null;
    const known = { state, reader: readerKey(state.principal) };
    this.known.set(ws, known);
    return known;
  }

  private state(ws: WebSocket): SocketState | null {
    return this.knownOf(ws)?.state ?? null;
  }

  /** The socket's read plan under the live manifest, shared with every socket of the same reader. */
  private planOf(known: KnownSocket, live: { version: number; manifest: CompiledManifest }): ReadPlan {
    if (known.plan?.version === live.version) return known.plan;
    if (this.plansVersion !== live.version || this.plans.size >= MAX_READ_PLANS) {
      this.plans.clear();
      this.plansVersion = live.version;
    }
    let plan = this.plans.get(known.reader);
    if (!plan) {
      plan = new ReadPlan(live.version, live.manifest, known.state.principal);
      this.plans.set(known.reader, plan);
    }
    known.plan = plan;
    return plan;
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** The manifest to judge a socket by: the newest the store knows, never older than the socket's own. */
  private async manifestFor(state: SocketState): Promise<CompiledManifest> {
    const current = this.host.current();
    return current && current.version >= state.version ? current.manifest : this.host.load(state.appId, state.version);
  }

  private tags(manifest: CompiledManifest, principal: Principal, version: number): string[] {
    const readable = Object.keys(manifest.collections).filter((name) => authorize(manifest, principal, "list", { collection: name }).ok);
    return [versionTag(version), ...(readable.length > COLLECTION_TAGS ? [ANY_COLLECTION] : readable.map(collectionTag))];
  }

  /**
   * The Worker's forwarded upgrade: accept the socket, remember who it is, say hello; the
   * client end of the socket is answered for the store to hand back. A socket whose access
   * was withdrawn since the Worker checked it is closed (1012) at once, to come back and be
   * judged afresh.
   */
  async connect(handoff: SocketHandoff): Promise<Outcome<WebSocket>> {
    const loaded = await attempt(() => this.host.load(handoff.appId, handoff.version));
    if (!loaded.ok) return loaded;
    const manifest = loaded.value;
    const [client, server] = Object.values(new WebSocketPair());
    const initial: SocketState = {
      appId: handoff.appId, version: handoff.version, principal: handoff.principal, cursor: 0, live: false,
      ...(typeof handoff.expiresAt === "number" ? { expiresAt: handoff.expiresAt } : {}),
      ...(typeof handoff.previewTokenId === "string" ? { previewTokenId: handoff.previewTokenId } : {}),
    };
    if (this.host.withdrawals.since(typeof handoff.checkedAt === "number" ? handoff.checkedAt : 0, initial.principal, initial.previewTokenId)) {
      server.accept();
      server.close(1012, "reconnect");
      return { ok: true, value: client };
    }
    const tags = this.tags(manifest, handoff.principal, handoff.version);
    this.ctx.acceptWebSocket(server, tags);
    try {
      server.serializeAttachment(initial);
      this.known.set(server, { state: initial, reader: readerKey(initial.principal), tags });
    } catch {
      server.close(1011, "socket state too large");
      return { ok: true, value: client };
    }
    // The credential may have run out between the Worker's check and this moment.
    if (!this.expired(server, initial)) {
      send(server, JSON.stringify({ type: "hello", seq: headSeq(this.sql), ...handoff.hello }));
      if (initial.expiresAt !== undefined) await this.host.expiresBy(initial.expiresAt);
    }
    return { ok: true, value: client };
  }

  /** A frame from a client. The only one the protocol has is `sub {since}`. */
  async message(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    const state = this.state(ws);
    if (!state) {
      ws.close(1011, "lost socket state");
      return;
    }
    if (this.expired(ws, state)) return;
    let frame: { type?: unknown; since?: unknown };
    try {
      frame = JSON.parse(typeof raw === "string" ? raw : new TextDecoder().decode(raw)) as typeof frame;
    } catch {
      send(ws, errorFrame("invalid_request", "Frames are JSON objects; the only client frame is {\"type\":\"sub\",\"since\":<seq>}."));
      return;
    }
    if (typeof frame !== "object" || frame === null || frame.type !== "sub") {
      send(ws, errorFrame("invalid_request", "Unknown frame; the only client frame is {\"type\":\"sub\",\"since\":<seq>}."));
      return;
    }
    const since = frame.since ?? 0;
    if (typeof since !== "number" || !Number.isSafeInteger(since) || since < 0) {
      send(ws, errorFrame("invalid_request", "sub.since must be a non-negative integer (0 = from the beginning)."));
      return;
    }
    const manifest = await this.manifestFor(state);
    // From here on everything is synchronous: no commit can slip in between the page and going live.
    this.subscribe(ws, state, manifest, since);
  }

  private subscribe(ws: WebSocket, state: SocketState, manifest: CompiledManifest, since: number): void {
    const head = headSeq(this.sql);
    const page = since > head ? ({ resync: true } as const) : readFeed(this.sql, since, SUB_PAGE_ENTRIES);
    if ("resync" in page) {
      // Below the floor, or a cursor from another life of this feed: re-list, then follow from the head.
      send(ws, '{"type":"resync"}');
      send(ws, JSON.stringify({ type: "batch", entries: [], cursor: head, truncated: false }));
      this.remember(ws, { ...state, cursor: head, live: true });
      return;
    }
    const visible = visibleEntries(this.sql, manifest, state.principal, page.entries);
    const kept: string[] = [];
    let bytes = 0;
    let last: number | null = null;
    for (const entry of visible) {
      const text = JSON.stringify(entry);
      if (kept.length > 0 && bytes + text.length > FRAME_BYTES) break;
      kept.push(text);
      bytes += text.length;
      last = entry.seq;
    }
    const trimmed = kept.length < visible.length;
    const cursor = trimmed ? last! : page.cursor;
    const truncated = trimmed || page.truncated;
    send(ws, `{"type":"batch","entries":[${kept.join(",")}],"cursor":${cursor},"truncated":${truncated}}`);
    this.remember(ws, { ...state, cursor, live: !truncated });
  }

  /** Closes a socket whose credential expired (by `now`); true when it did. */
  private expired(ws: WebSocket, state: SocketState, now = Date.now()): boolean {
    if (state.expiresAt === undefined || now < state.expiresAt) return false;
    send(ws, errorFrame("unauthorized", "The credential this socket was opened with (app session, grant link or preview link) has expired; reconnect with a current one."));
    try {
      ws.close(EXPIRED_CLOSE_CODE, "credential expired");
    } catch {
      // Already closing.
    }
    return true;
  }

  /**
   * The store's alarm: closes every socket whose credential has run out, idle or not, and
   * answers when the next one runs out (null when none will), so the alarm can be set again.
   */
  closeExpired(): number | null {
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets()) {
      const state = this.state(ws);
      if (!state || state.expiresAt === undefined || this.expired(ws, state)) continue;
      if (next === null || state.expiresAt < next) next = state.expiresAt;
    }
    return next;
  }

  private remember(ws: WebSocket, state: SocketState): void {
    try {
      ws.serializeAttachment(state);
      const hit = this.known.get(ws);
      if (hit) hit.state = state;
      else this.known.set(ws, { state, reader: readerKey(state.principal) });
    } catch {
      ws.close(1011, "socket state too large");
    }
  }

  /** A socket's tags, read from the runtime once per socket and wake. */
  private tagsOf(ws: WebSocket): string[] {
    const hit = this.known.get(ws);
    if (hit?.tags) return hit.tags;
    const tags = this.ctx.getTags(ws);
    if (hit) hit.tags = tags;
    return tags;
  }

  /**
   * Whether a socket may read any of these collections, by its tags: tagged with one of
   * them (or any), or accepted under another manifest version, whose tags were computed
   * from that version's read lists.
   */
  private mayCare(ws: WebSocket, names: ReadonlySet<string>, current: string): boolean {
    const tags = this.tagsOf(ws);
    return !tags.includes(current) || tags.some((tag) => tag === ANY_COLLECTION || names.has(tag));
  }

  /**
   * After a commit. A write that follows a quiet spell has its entries pushed as soon as the
   * write's own code is done (before its answer leaves: sends are buffered, so this costs
   * the answer one pass over the sockets, never a slow watcher's time). Within BURST_MS of
   * the last fan-out the entries wait for the next turn instead, together with those of
   * every other write committed meanwhile, so a burst of writes costs one pass and one
   * frame per socket, not one per write. No entries means rows changed without feed
   * entries (a retention sweep): whatever is pending goes out, then every live socket is
   * told to re-list.
   */
  afterCommit(entries: HeldEntry[]): void {
    if (entries.length === 0) {
      this.flush();
      for (const ws of this.ctx.getWebSockets()) {
        const state = this.state(ws);
        if (state?.live && !this.expired(ws, state)) send(ws, '{"type":"resync"}');
      }
      return;
    }
    if (this.pending) {
      this.pending.entries.push(...entries);
      return;
    }
    const inBurst = Date.now() - this.lastFlushAt < BURST_MS;
    this.pending = { entries: [...entries], timer: inBurst ? setTimeout(() => this.flush(), 0) : undefined };
    if (!inBurst) queueMicrotask(() => this.flush());
  }

  /**
   * Pushes the pending entries now, in one pass over the sockets: each live socket that may
   * care gets the frames of its reader class (fanout.ts), less what its cursor covers.
   */
  private flush(): void {
    const pending = this.pending;
    if (!pending) return;
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    this.pending = null;
    this.lastFlushAt = Date.now();
    const live = this.host.current();
    if (!live) return;
    const { entries } = pending;
    const names = new Set(entries.map((held) => collectionTag(held.entry.collection_name)));
    const current = versionTag(live.version);
    const fanout = new Fanout(this.sql, entries);
    const now = Date.now();
    for (const ws of this.ctx.getWebSockets()) {
      const known = this.knownOf(ws);
      if (!known || !known.state.live || !this.mayCare(ws, names, current) || this.expired(ws, known.state, now)) continue;
      for (const frame of fanout.framesFor(this.planOf(known, live), known.state.cursor)) send(ws, frame);
    }
  }

  /**
   * Ends every socket — or only those `only` selects (a removed or re-roled member's, a
   * revoked grant link's holders', a revoked preview token's viewers'): `_dormant` /
   * `_suspended` (terminal), or a plain close (1012) asking clients to reconnect and so
   * be judged again.
   */
  closeAll(reason: CloseReason, only?: SocketSelector): number {
    this.host.withdrawals.record(only);
    const sockets = this.ctx.getWebSockets().filter((ws) => {
      if (!only) return true;
      const state = this.state(ws);
      return !!state && reaches(only, state.principal, state.previewTokenId);
    });
    for (const ws of sockets) {
      if (reason !== "reconnect") send(ws, JSON.stringify({ type: `_${reason}` }));
      try {
        ws.close(reason === "reconnect" ? 1012 : 1000, reason);
      } catch {
        // Already closing.
      }
    }
    return sockets.length;
  }

  /** The client went away: complete the close handshake. 1005/1006 cannot be sent back (STACK trap 8). */
  close(ws: WebSocket, code: number, reason: string): void {
    const sendable = code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
    try {
      ws.close(sendable ? code : 1000, sendable ? reason : "");
    } catch {
      // Already closed.
    }
  }

  error(ws: WebSocket): void {
    try {
      ws.close(1011, "socket error");
    } catch {
      // Already closed.
    }
  }
}
