/**
 * The store's due work and its one alarm (DESIGN §5.7; partywhen's `scheduleNextAlarm` is
 * the model). A Durable Object has a single alarm, while the store has several jobs that
 * must come back by themselves: handing the outbox to the queue, sweeping rows past their
 * retention and tombstones past the restore window and pruning the feed, and closing
 * sockets whose credential expired. Each job records in `_svc_due` when it must run next
 * at the latest; the alarm is set for the earliest of those.
 *
 * When the alarm rings every job runs: each is cheap, idempotent and correct at any time,
 * so one that was due later simply runs early. Each answers when it is due again (or never)
 * and a job that fails is logged and retried after a growing delay, on its own: the alarm
 * itself never fails (the platform retries a failing alarm only a few times), and the table
 * outlives any alarm, so `arm` on the store's next wake sets the alarm again for whatever
 * is still due.
 */
import { errorLogLine } from "../../src/db/query-errors";

/** The store's jobs that come back by themselves. */
export type Job = "flush" | "sweep" | "expiry";

/** Runs a job; answers when it is due again (ms since the epoch), or null when it has nothing more to do. */
export type JobRunner = () => Promise<number | null> | number | null;

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 10 * 60_000;

export class DueWork {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** The earliest time any job is due, or null when none is. */
  earliest(): number | null {
    const row = this.sql.exec<{ at: number | null }>("SELECT min(at) AS at FROM _svc_due").one();
    return row.at === null ? null : Number(row.at);
  }

  /** Records that `job` must run no later than `at` (an earlier record stands), and moves the alarm up to it if needed. */
  async dueBy(job: Job, at: number): Promise<void> {
    this.sql.exec("INSERT INTO _svc_due (job, at) VALUES (?, ?) ON CONFLICT (job) DO UPDATE SET at = min(at, excluded.at)", job, at);
    await this.arm();
  }

  /** Sets the alarm for the earliest due job unless it is already set to ring by then. */
  async arm(): Promise<void> {
    const next = this.earliest();
    if (next === null) return;
    const set = await this.storage.getAlarm();
    if (set === null || set > next) await this.storage.setAlarm(next);
  }

  /**
   * The alarm: runs every job, records when each is due again, and sets the alarm for the
   * earliest. A job that throws is logged and comes back after a delay that doubles with
   * each failure in a row.
   */
  async ring(jobs: Record<Job, JobRunner>): Promise<void> {
    for (const [job, run] of Object.entries(jobs) as [Job, JobRunner][]) {
      try {
        const next = await run();
        if (next === null) this.sql.exec("DELETE FROM _svc_due WHERE job = ?", job);
        else this.sql.exec("INSERT INTO _svc_due (job, at, failures) VALUES (?, ?, 0) ON CONFLICT (job) DO UPDATE SET at = excluded.at, failures = 0", job, next);
      } catch (err) {
        const failures = Number(this.sql.exec<{ failures: number }>("SELECT failures FROM _svc_due WHERE job = ?", job).toArray()[0]?.failures ?? 0) + 1;
        const retryAt = Date.now() + Math.min(FIRST_RETRY_MS * 2 ** (failures - 1), MAX_RETRY_MS);
        console.error(`app store: the ${job} job failed (${failures} in a row); it runs again in ${retryAt - Date.now()} ms`, errorLogLine(err));
        this.sql.exec("INSERT INTO _svc_due (job, at, failures) VALUES (?, ?, ?) ON CONFLICT (job) DO UPDATE SET at = excluded.at, failures = excluded.failures", job, retryAt, failures);
      }
    }
    const next = this.earliest();
    if (next !== null) await this.storage.setAlarm(next);
  }
}
