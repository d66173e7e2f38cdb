// Following an app's change feed for `service apps watch` (WIRE §3.1, §3.3, §2.4).
//
// First the app feed socket on the app's own origin (`<app url>/_svc/ws`, subprotocols
// `service.v1` and `service.agentkey.<key>`). If it cannot be opened, or closes before its
// `hello`, the watch falls back PERMANENTLY to long-polling
// `GET /v1/apps/:id/feed?since=<cursor>&wait=25` on the API origin. Either way every
// FeedEntry is emitted once (entries at or below the highest seq seen are dropped), and
// `--collection` keeps only those collections' entries: the long-poll asks the relay for
// them (`&collection=a,b`, spec A; the page cursor still moves past the others), the
// socket has no such filter so its frames are filtered here (and the long-poll's too,
// which costs nothing against a relay that already filtered). Then:
//   - `_dormant` frame, or 409 conflict "app is dormant": emit {"type":"_dormant"}, exit 0;
//   - `_suspended` frame: emit {"type":"_suspended"}, exit 0 (long-poll sees 410 `gone`: error);
//   - `resync` frame, or 410 resync_required: emit {"type":"resync"} and keep going from the
//     head (the socket's next batch cursor, the long-poll error's details.head);
//   - --once: exit 0 after the first emitted entry; --timeout: ws_timeout (exit 1) when
//     nothing terminal happened in time; SIGINT (the caller's signal): exit 0;
//   - socket closed after hello: 1000/1001 exit 0, anything else ws_closed_abnormally.
// Node's resolver cannot resolve `*.localhost`, so such hosts are dialled on loopback
// (the Host header still names the app).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
// `ws` (with Node's http, https, tls and zlib behind it) is loaded only when a watch opens a
// socket: importing it up front cost every other command tens of milliseconds of start-up.
import type { ClientOptions, WebSocket } from "ws";
import { CliError, UpgradeRequiredError } from "./errors.ts";
import { errorFromResponse, parseJsonBody, type RawResponse } from "./http.ts";

/** WIRE §2.4: the CLI's long-poll hold. */
export const LONG_POLL_WAIT_SECONDS = 25;
const SOCKET_HANDSHAKE_MS = 10_000;
/** An open socket that sends no `hello` in this time counts as failed (fallback). */
const SOCKET_HELLO_MS = 10_000;
/** Added to the hold for the long-poll request's own deadline. */
const REQUEST_MARGIN_MS = 20_000;
/** Consecutive transient long-poll failures tolerated (relay restarting) before giving up. */
const MAX_TRANSIENT_FAILURES = 5;
const FEED_PAGE = 1000;
const RESYNC_ATTEMPTS = 3;

export interface WatchOptions {
  /** The relay's API base URL. */
  apiBase: string;
  appId: string;
  /** The app's own URL (from its AppDetail); null skips the socket. */
  appUrl: string | null;
  apiKey: string;
  /** Sent as x-service-cli-version, like every other call. */
  cliVersion: string | null;
  since: number;
  /** Only entries of these collections are emitted; null = all. */
  collections: Set<string> | null;
  once: boolean;
  timeoutMs: number | null;
  /** One JSON value per call; the caller prints it as one compact line. */
  emit(line: Record<string, unknown>): void;
  warn(text: string): void;
  /** Aborted on SIGINT: the watch ends with exit 0. */
  signal: AbortSignal;
}

type Outcome = { done: number } | { fallback: string };

/** The app socket URL: http→ws, https→wss, path + `/_svc/ws`, query and fragment dropped. */
export function appSocketUrl(appUrl: string): string {
  return socketUrl(appUrl, "/_svc/ws");
}

/** `base` (http or https) as a WebSocket URL with `path` appended, query and fragment dropped. */
export function socketUrl(base: string, path: string): string {
  const url = new URL(base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  url.search = "";
  url.hash = "";
  return url.toString();
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, except that `localhost` and `*.localhost` are loopback (RFC 6761). */
export function loopbackLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) {
    if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
    return;
  }
  dnsLookup(hostname, options, callback as never);
}

function timeoutError(ms: number): CliError {
  return new CliError("ws_timeout", `Nothing ended the watch within ${Math.round(ms / 100) / 10} seconds (--timeout).`, {
    hint: "Raise --timeout, or drop it to watch until interrupted.",
  });
}

class Watch {
  private highest: number;
  private cursor: number;
  private readonly deadline: number | null;

  constructor(private readonly o: WatchOptions) {
    this.cursor = o.since;
    this.highest = o.since;
    this.deadline = o.timeoutMs === null ? null : Date.now() + o.timeoutMs;
  }

  private remainingMs(): number {
    return this.deadline === null ? Number.POSITIVE_INFINITY : this.deadline - Date.now();
  }

  /** Emits an entry unless already seen or filtered out; true when --once is satisfied. */
  private entry(raw: unknown): boolean {
    if (typeof raw !== "object" || raw === null) return false;
    const entry = raw as Record<string, unknown>;
    const seq = typeof entry.seq === "number" ? entry.seq : null;
    if (seq !== null) {
      if (seq <= this.highest) return false;
      this.highest = seq;
      this.cursor = Math.max(this.cursor, seq);
    }
    if (this.o.collections && !this.o.collections.has(String(entry.collection_name))) return false;
    this.o.emit(entry);
    return this.o.once;
  }

  async run(): Promise<number> {
    if (this.o.signal.aborted) return 0;
    if (this.o.appUrl) {
      const outcome = await this.socket(this.o.appUrl);
      if ("done" in outcome) return outcome.done;
    }
    return this.longPoll();
  }

  // ---- the app socket (WIRE §3.1) ----

  private async socket(appUrl: string): Promise<Outcome> {
    const { WebSocket } = await import("ws");
    return new Promise<Outcome>((resolve, reject) => {
      let hello = false;
      let settled = false;
      let ws: WebSocket;
      let helloTimer: NodeJS.Timeout | undefined;
      const finish = (outcome: Outcome | CliError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(helloTimer);
        this.o.signal.removeEventListener("abort", onAbort);
        try {
          if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
        } catch {
          /* already gone */
        }
        if (outcome instanceof CliError) reject(outcome);
        else resolve(outcome);
      };
      const onAbort = () => finish({ done: 0 });
      const remaining = this.remainingMs();
      const timer = setTimeout(() => finish(timeoutError(this.o.timeoutMs ?? 0)), Number.isFinite(remaining) ? Math.max(remaining, 0) : 2 ** 31 - 1);
      this.o.signal.addEventListener("abort", onAbort);

      try {
        const options: ClientOptions & { lookup: typeof loopbackLookup } = {
          handshakeTimeout: Math.max(1, Math.min(SOCKET_HANDSHAKE_MS, remaining)),
          perMessageDeflate: false,
          headers: this.o.cliVersion ? { "x-service-cli-version": this.o.cliVersion } : {},
          lookup: loopbackLookup,
        };
        ws = new WebSocket(appSocketUrl(appUrl), ["service.v1", `service.agentkey.${this.o.apiKey}`], options);
      } catch (err) {
        finish({ fallback: (err as Error).message });
        return;
      }
      ws.on("open", () => {
        ws.send(JSON.stringify({ type: "sub", since: this.cursor }));
        helloTimer = setTimeout(() => {
          if (!hello) finish({ fallback: "no hello" });
        }, SOCKET_HELLO_MS);
      });
      ws.on("error", (err) => {
        if (!hello) finish({ fallback: err.message });
      });
      ws.on("close", (code, reason) => {
        if (!hello) return finish({ fallback: `closed with ${code} before hello` });
        if (code === 1000 || code === 1001) return finish({ done: 0 });
        finish(new CliError("ws_closed_abnormally", `The app feed socket closed with code ${code}.`, { details: { code, reason: reason.toString() } }));
      });
      ws.on("message", (data) => {
        let frame: Record<string, unknown>;
        try {
          frame = JSON.parse(data.toString()) as Record<string, unknown>;
        } catch {
          this.o.warn("the app feed socket sent a frame that is not JSON; ignored");
          return;
        }
        switch (frame.type) {
          case "hello":
            hello = true;
            return;
          case "batch": {
            hello = true;
            for (const entry of Array.isArray(frame.entries) ? frame.entries : []) if (this.entry(entry)) return finish({ done: 0 });
            if (typeof frame.cursor === "number") this.cursor = Math.max(this.cursor, frame.cursor);
            this.highest = Math.max(this.highest, this.cursor);
            if (frame.truncated === true) ws.send(JSON.stringify({ type: "sub", since: this.cursor }));
            return;
          }
          case "entry":
            if (this.entry(frame.entry)) finish({ done: 0 });
            return;
          case "resync":
            this.o.emit({ type: "resync" });
            return;
          case "_dormant":
          case "_suspended":
            this.o.emit({ type: frame.type });
            return finish({ done: 0 });
          case "error": {
            const error = (typeof frame.error === "object" && frame.error !== null ? frame.error : {}) as Record<string, unknown>;
            return finish(new CliError(typeof error.code === "string" ? error.code : "relay_error", typeof error.message === "string" ? error.message : "The app feed socket reported an error.", { details: error.details }));
          }
          case "agent-task.available":
          case "notification":
            return; // hints for other consumers of the same socket
          default:
            this.o.warn(`the app feed socket sent an unknown frame type ${JSON.stringify(frame.type)}; ignored`);
        }
      });
    });
  }

  // ---- long-poll (WIRE §2.4) ----

  private async get(since: number, limit: number | null, waitSeconds: number): Promise<RawResponse | "aborted" | "timeout"> {
    const params = new URLSearchParams({ since: String(since), wait: String(waitSeconds) });
    if (limit !== null) params.set("limit", String(limit));
    if (this.o.collections) params.set("collection", [...this.o.collections].join(","));
    const url = `${this.o.apiBase}/v1/apps/${encodeURIComponent(this.o.appId)}/feed?${params}`;
    const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${this.o.apiKey}` };
    if (this.o.cliVersion) headers["x-service-cli-version"] = this.o.cliVersion;
    const signals = [this.o.signal, AbortSignal.timeout(waitSeconds * 1000 + REQUEST_MARGIN_MS)];
    const remaining = this.remainingMs();
    const deadline = Number.isFinite(remaining) ? AbortSignal.timeout(Math.max(remaining, 0)) : null;
    if (deadline) signals.push(deadline);
    try {
      const res = await fetch(url, { headers, redirect: "manual", signal: AbortSignal.any(signals) });
      return { status: res.status, headers: res.headers, text: await res.text() };
    } catch (err) {
      if (this.o.signal.aborted) return "aborted";
      if (deadline?.aborted) return "timeout";
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const reason = (err as Error).name === "TimeoutError" ? "the request timed out" : cause?.code ?? cause?.message ?? (err as Error).message;
      throw new CliError("fetch_error", `Could not reach the relay at ${new URL(url).origin}: ${reason}.`, {
        hint: "Check --url, SERVICE_URL or the profile's url, and that the relay is running.",
        details: { url },
      });
    }
  }

  private async longPoll(): Promise<number> {
    let transient = 0;
    for (;;) {
      if (this.o.signal.aborted) return 0;
      const remaining = this.remainingMs();
      if (remaining <= 0) throw timeoutError(this.o.timeoutMs ?? 0);
      const wait = Math.min(LONG_POLL_WAIT_SECONDS, Math.floor(remaining / 100) / 10);
      let res: RawResponse | "aborted" | "timeout";
      try {
        res = await this.get(this.cursor, null, wait);
      } catch (err) {
        if (!(err instanceof CliError) || ++transient > MAX_TRANSIENT_FAILURES) throw err;
        await this.pause(transient, err.message);
        continue;
      }
      if (res === "aborted") return 0;
      if (res === "timeout") throw timeoutError(this.o.timeoutMs ?? 0);
      if (res.status >= 200 && res.status <= 299) {
        transient = 0;
        const page = parseJsonBody(res) as { entries?: unknown; cursor?: unknown };
        if (!Array.isArray(page.entries)) throw new CliError("invalid_response", "The relay's feed page has no entries array.", { details: { status: res.status } });
        for (const entry of page.entries) if (this.entry(entry)) return 0;
        if (typeof page.cursor === "number") this.cursor = Math.max(this.cursor, page.cursor);
        this.highest = Math.max(this.highest, this.cursor);
        continue;
      }
      const error = errorFromResponse(res);
      if (res.status === 409 && error.code === "conflict" && error.message === "app is dormant") {
        this.o.emit({ type: "_dormant" });
        return 0;
      }
      if (res.status === 410 && error.code === "resync_required") {
        if (await this.resync(error.details)) return 0;
        continue;
      }
      if (!(error instanceof UpgradeRequiredError) && [502, 503, 504].includes(res.status) && ++transient <= MAX_TRANSIENT_FAILURES) {
        await this.pause(transient, error.message);
        continue;
      }
      throw error;
    }
  }

  private async pause(attempt: number, why: string): Promise<void> {
    const ms = Math.min(1000 * 2 ** (attempt - 1), 8000);
    this.o.warn(`the feed request failed (${why}); retrying in ${ms / 1000} s`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(ms, Math.max(this.remainingMs(), 0)));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.o.signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * The cursor fell below the feed's retention floor (or lies past its head). The
   * consumer re-lists, so the watch resumes at the feed's head: the relay names it in the
   * error's details.head; a relay that does not is probed instead — find the floor (the
   * smallest accepted cursor), page from it to the head without emitting. Then the resync
   * line. Returns true when the watch should end (interrupted).
   */
  private async resync(details?: unknown): Promise<boolean> {
    const head = typeof details === "object" && details !== null ? (details as { head?: unknown }).head : undefined;
    if (typeof head === "number" && Number.isSafeInteger(head) && head >= 0) {
      this.cursor = head;
      this.highest = head;
      this.o.emit({ type: "resync" });
      return false;
    }
    for (let attempt = 0; attempt < RESYNC_ATTEMPTS; attempt++) {
      const floor = await this.findFloor();
      if (floor === "aborted") return true;
      let since = floor;
      let below = false;
      for (let pages = 0; ; pages++) {
        const res = await this.probe(since, FEED_PAGE);
        if (res === "aborted") return true;
        if (res === "below") {
          below = true;
          break;
        }
        since = Math.max(since, res.cursor);
        if (!res.truncated || pages > 10_000) break;
      }
      if (below) continue; // the floor moved again meanwhile
      this.cursor = since;
      this.highest = since;
      this.o.emit({ type: "resync" });
      return false;
    }
    throw new CliError("resync_required", "The feed's retention floor kept moving while the watch tried to resync.", { retryable: true });
  }

  /** One feed read without holding: "below" for 410 resync_required. */
  private async probe(since: number, limit: number): Promise<{ cursor: number; truncated: boolean } | "below" | "aborted"> {
    const res = await this.get(since, limit, 0);
    if (res === "aborted") return "aborted";
    if (res === "timeout") throw timeoutError(this.o.timeoutMs ?? 0);
    if (res.status >= 200 && res.status <= 299) {
      const page = parseJsonBody(res) as { cursor?: unknown; truncated?: unknown };
      return { cursor: typeof page.cursor === "number" ? page.cursor : since, truncated: page.truncated === true };
    }
    const error = errorFromResponse(res);
    if (res.status === 410 && error.code === "resync_required") return "below";
    throw error;
  }

  private async findFloor(): Promise<number | "aborted"> {
    let bad = this.cursor;
    let good = Math.max(bad + 1, 1);
    for (let i = 0; ; i++) {
      if (i > 60) throw new CliError("invalid_response", "Could not find the feed's retention floor.");
      const res = await this.probe(good, 1);
      if (res === "aborted") return "aborted";
      if (res !== "below") break;
      bad = good;
      good *= 2;
    }
    while (good - bad > 1) {
      const mid = Math.floor((bad + good) / 2);
      const res = await this.probe(mid, 1);
      if (res === "aborted") return "aborted";
      if (res === "below") bad = mid;
      else good = mid;
    }
    return good;
  }
}

/** Follows the feed until something terminal happens; resolves to the exit code. */
export function watchFeed(options: WatchOptions): Promise<number> {
  return new Watch(options).run();
}
