/**
 * The page's end of the app feed socket (WIRE §3.1) at `/_svc/ws` on its own origin. The
 * credentials ride as subprotocol tokens after `service.v1` (`service.session.<token>` or
 * else `service.grant.<grh_…>`, `service.share.<token>`, `service.visitor.<token>`); the
 * relay answers `service.v1`.
 * After `hello` it subscribes from the store's cursor, feeds `batch`/`entry` frames to the
 * store (which drops any seq it has already applied), asks again while a batch is
 * `truncated`, retakes the snapshot on `resync`, and stops for good on `_dormant` or
 * `_suspended`. A dropped socket is reopened after 1 s, doubling to 30 s (with jitter),
 * and resumes from the cursor, so nothing is missed or applied twice.
 */
import { socketProtocols } from "./common";
import type { Store, WireEntry } from "./store";

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

export class Live {
  private ws: WebSocket | null = null;
  private delay = FIRST_DELAY_MS;
  private stopped = false;
  private greeted: (() => void) | null = null;
  private readonly firstHello: Promise<void>;

  constructor(private readonly store: Store) {
    this.firstHello = new Promise((resolve) => {
      this.greeted = resolve;
    });
  }

  start(): void {
    this.open();
  }

  /** Resolves at the first hello, the first failure, or after `ms`, whichever comes first. */
  helloOrGiveUp(ms: number): Promise<void> {
    return Promise.race([this.firstHello, new Promise<void>((r) => setTimeout(r, ms))]);
  }

  private settle(): void {
    this.greeted?.();
    this.greeted = null;
  }

  private open(): void {
    if (this.stopped) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(`${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/_svc/ws`, socketProtocols());
    } catch {
      this.settle();
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onmessage = (ev) => this.frame(ws, ev.data);
    ws.onclose = () => {
      if (this.ws === ws) this.ws = null;
      this.settle();
      this.retry();
    };
  }

  private retry(): void {
    if (this.stopped) return;
    const wait = this.delay * (0.75 + Math.random() * 0.5);
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
    setTimeout(() => this.open(), wait);
  }

  private send(ws: WebSocket, frame: unknown): void {
    try {
      ws.send(JSON.stringify(frame));
    } catch {
      // Closing: the reconnect resumes from the cursor.
    }
  }

  private frame(ws: WebSocket, raw: unknown): void {
    let f: { type?: string; seq?: number; entries?: WireEntry[]; entry?: WireEntry; cursor?: number; truncated?: boolean; error?: unknown };
    try {
      f = JSON.parse(String(raw)) as typeof f;
    } catch {
      return;
    }
    switch (f.type) {
      case "hello":
        this.delay = FIRST_DELAY_MS;
        this.store.hello(Number(f.seq) || 0);
        this.send(ws, { type: "sub", since: this.store.cursor ?? 0 });
        this.settle();
        return;
      case "batch":
        this.store.entries(Array.isArray(f.entries) ? f.entries : []);
        this.store.advance(Number(f.cursor));
        if (f.truncated) this.send(ws, { type: "sub", since: this.store.cursor ?? 0 });
        return;
      case "entry":
        if (f.entry) this.store.entries([f.entry]);
        return;
      case "resync":
        void this.store.sync();
        return;
      case "_dormant":
      case "_suspended":
        // Terminal: the app is asleep or taken down; the mirror stays as it was.
        this.stopped = true;
        console.info(`service: live updates stopped (${f.type.slice(1)}).`);
        ws.close(1000);
        return;
      case "error":
        console.warn("service: the feed socket reported an error", f.error);
        return;
      default:
        // Frames this page script does not know are ignored.
    }
  }
}
