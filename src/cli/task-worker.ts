// The loop behind `service work` (spec C "work", WIRE §2.8, §3.2, §3.4, §6.7): claim tasks
// (`POST /v1/agent-tasks/claim` with the free capacity as `max`, and `app_ids` with --app),
// run `--exec` once per task with the envelope as ONE JSON line on its stdin, then ack on
// exit 0 with the last 3,900 characters of its trimmed stdout (`{}` when empty), or nack
// with its stderr, else its stdout, else `worker exited <code>` (last 3,900 characters).
// A failed ack or nack is logged; the lease lapses and the task comes back.
//
// Polling is the floor: claim, then sleep --poll-interval, cut short by a wake frame or a
// child finishing. The wake socket (wake-socket.ts) adds pushed assignments: after `hello
// { push: true }` the worker states its free capacity as `ready { credits }` (absolute,
// restated on every pass and after each finish); with --app it states 0 and claims over
// HTTP when an `agent-task.available` names one of its apps, since the socket serves all
// of the owner's apps. An assignment beyond the free capacity waits its turn locally.
// A stop (SIGINT, SIGTERM) ends claiming and the socket, lets running children finish,
// and resolves. --once is one claim pass whose children are awaited, without a socket.
// Each finished task prints one JSON line on stdout ({ task, app, type, status, seconds,
// exit? }) and a progress line on stderr. The raw claim/ack/nack calls send no
// `x-service-cli-version` (WIRE §1.1).
import { spawn } from "node:child_process";
import { CliError } from "./errors.ts";
import { errorFromResponse, type RelayClient } from "./http.ts";
import { WakeSocket } from "./wake-socket.ts";

/** What ack and nack keep of a child's output (WIRE §2.8). */
export const REPORT_CHARS = 3900;
/** Output kept per stream while a child runs: its tail is all a report needs. */
const KEEP_CHARS = 64 * 1024;

export interface WorkerOptions {
  relay: RelayClient;
  apiKey: string;
  exec: string;
  appIds: string[] | null;
  maxConcurrent: number;
  pollIntervalMs: number;
  once: boolean;
  emit(line: Record<string, unknown>): void;
  note(text: string): void;
  warn(text: string): void;
  signal: AbortSignal;
}

type Envelope = Record<string, unknown> & { task_id: string };

function tail(text: string, chars: number): string {
  return text.length > chars ? text.slice(text.length - chars) : text;
}

export class TaskWorker {
  private running = 0;
  private readonly waiting: Envelope[] = [];
  private readonly children = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private socket: WakeSocket | null = null;

  constructor(private readonly o: WorkerOptions) {}

  async run(): Promise<number> {
    const stopped = () => this.o.signal.aborted;
    this.o.signal.addEventListener("abort", () => this.nudge());
    if (this.o.once) {
      await this.claimPass(true);
      await Promise.all(this.children);
      return 0;
    }
    this.socket = new WakeSocket(this.o.relay.baseUrl, this.o.apiKey, {
      hello: () => this.offerCredit(),
      available: (appId) => {
        if (!this.o.appIds || this.o.appIds.includes(appId)) this.nudge();
      },
      assign: (envelope) => this.take(envelope as Envelope),
      lost: () => this.nudge(),
      warn: (text) => this.o.warn(text),
      note: (text) => this.o.note(text),
    });
    this.socket.start();
    while (!stopped()) {
      await this.claimPass(false);
      this.offerCredit();
      await this.sleep(this.o.pollIntervalMs);
    }
    this.socket.stop();
    if (this.running > 0) this.o.note(`stopping: waiting for ${this.running} running task(s)`);
    await Promise.all(this.children);
    return 0;
  }

  private free(): number {
    return Math.max(0, this.o.maxConcurrent - this.running - this.waiting.length);
  }

  /** The credit the socket may spend: none with --app (see the header). */
  private offerCredit(): void {
    if (!this.o.signal.aborted) this.socket?.ready(this.o.appIds ? 0 : this.free());
  }

  private nudge(): void {
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  private async claimPass(fatal: boolean): Promise<void> {
    const max = this.free();
    if (max === 0 || this.o.signal.aborted) return;
    let tasks: Envelope[];
    try {
      const res = await this.o.relay.raw("POST", "/v1/agent-tasks/claim", {
        auth: { kind: "key", key: this.o.apiKey }, body: { max, ...(this.o.appIds ? { app_ids: this.o.appIds } : {}) }, sendVersion: false,
      });
      if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
      const body = JSON.parse(res.text || "{}") as { tasks?: unknown };
      tasks = Array.isArray(body.tasks) ? (body.tasks as Envelope[]).filter((task) => typeof task?.task_id === "string") : [];
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (fatal) {
        throw new CliError("claim_failed", `Claiming tasks failed: ${message}`, {
          hint: "Check the relay URL and your key (`service config show`), then run again.",
          details: err instanceof CliError ? { code: err.code } : undefined,
        });
      }
      this.o.warn(`claiming tasks failed (${message}); retrying on the next pass`);
      return;
    }
    for (const task of tasks) this.take(task);
  }

  /** Runs a leased task now, or as soon as a slot frees. */
  private take(task: Envelope): void {
    if (this.running >= this.o.maxConcurrent) {
      this.waiting.push(task);
      return;
    }
    this.running += 1;
    const child = this.runTask(task).finally(() => {
      this.running -= 1;
      this.children.delete(child);
      const next = this.waiting.shift();
      if (next) this.take(next);
      this.offerCredit();
      this.nudge();
    });
    this.children.add(child);
  }

  private async runTask(task: Envelope): Promise<void> {
    const started = Date.now();
    const label = `task ${task.task_id} (${String(task.app_slug ?? task.app_id)} ${String(task.task_type ?? "")})`;
    this.o.note(`${label} started`);
    const { code, signal, stdout, stderr } = await this.spawnChild(task);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    const base = { task: task.task_id, app: task.app_id, type: task.task_type };
    if (code === 0) {
      const report = tail(stdout.trim(), REPORT_CHARS);
      await this.finish("ack", task.task_id, report ? { report } : {});
      this.o.emit({ ...base, status: "done", seconds });
      this.o.note(`${label} done in ${seconds}s`);
      return;
    }
    const exit = code ?? signal ?? "unknown";
    const report = tail(stderr.trim() || stdout.trim() || `worker exited ${exit}`, REPORT_CHARS);
    await this.finish("nack", task.task_id, { report });
    this.o.emit({ ...base, status: "failed", exit, seconds });
    this.o.note(`${label} failed (exit ${exit}) in ${seconds}s`);
  }

  private spawnChild(task: Envelope): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      let stdout = "";
      let stderr = "";
      const child = spawn(this.o.exec, { shell: true, stdio: ["pipe", "pipe", "pipe"] });
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => { stdout = tail(stdout + chunk, KEEP_CHARS); });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => { stderr = tail(stderr + chunk, KEEP_CHARS); });
      child.stdin.on("error", () => {
        // the child did not read its stdin; its exit decides
      });
      child.on("error", (err) => resolve({ code: 127, signal: null, stdout, stderr: stderr || err.message }));
      child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
      child.stdin.end(`${JSON.stringify(task)}\n`);
    });
  }

  private async finish(verb: "ack" | "nack", taskId: string, body: Record<string, unknown>): Promise<void> {
    try {
      const res = await this.o.relay.raw("POST", `/v1/agent-tasks/${taskId}/${verb}`, { auth: { kind: "key", key: this.o.apiKey }, body, sendVersion: false });
      if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
    } catch (err) {
      this.o.warn(`${verb} of task ${taskId} failed (${err instanceof Error ? err.message : String(err)}); its lease will lapse and it comes back`);
    }
  }
}
