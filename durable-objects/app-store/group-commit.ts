/**
 * Group commit: single-row writes that reach the store close together share one storage
 * transaction, and so one commit and one pass of the after-commit work (waiters, sockets,
 * outbox), instead of paying each once per row. A write is queued and the queue is
 * applied on the next turn of the event loop, so the calls that arrived meanwhile go in
 * the same group; a lone write waits one turn.
 *
 * Each write still runs alone inside the group: in a savepoint of its own, with its own
 * checks (the call is admitted again when it runs, since a redeploy or withdrawal may have
 * come in while it waited), its own feed entries and its own answer. A write that is
 * refused — or throws — rolls back its savepoint only; the others of the group commit.
 * Only a failure of the group's transaction itself fails every write in it.
 * docs/decisions/2026-11-26-group-commit.md says why and what it measured.
 */
import type { HeldEntry } from "./feed";
import { errorLogLine } from "../../src/db/query-errors";

/** One write: runs inside the group's transaction, appending its feed entries to `feed`. */
export type GroupedWrite<T> = (feed: HeldEntry[]) => T;

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Queued {
  write: GroupedWrite<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The store's queue of single-row writes, applied a group at a time. */
export class GroupCommit {
  private queue: Queued[] = [];

  constructor(private readonly storage: DurableObjectStorage, private readonly afterCommit: (feed: HeldEntry[]) => void) {}

  /** Queues `write` for the next group; settles with its own result or error once the group committed. */
  submit<T>(write: GroupedWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) setTimeout(() => this.apply(), 0);
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Runs the queued writes in one transaction, each in a savepoint of its own, hands the
   * feed entries of those that committed to `afterCommit` once, then answers each write.
   * Only when the transaction as a whole fails does every write get that failure.
   */
  private apply(): void {
    const group = this.queue;
    this.queue = [];
    const feed: HeldEntry[] = [];
    let settled: Settled[];
    try {
      settled = this.storage.transactionSync(() => group.map(({ write }): Settled => {
        const own: HeldEntry[] = [];
        try {
          const value = this.storage.transactionSync(() => write(own));
          feed.push(...own);
          return { ok: true, value };
        } catch (error) {
          return { ok: false, error };
        }
      }));
    } catch (error) {
      for (const queued of group) queued.reject(error);
      return;
    }
    try {
      if (feed.length) this.afterCommit(feed);
    } catch (error) {
      // The group is committed: its writes are answered as done whatever the hand-on did.
      console.error("group commit: the work after a commit failed", errorLogLine(error));
    }
    group.forEach((queued, index) => {
      const one = settled[index];
      if (one.ok) queued.resolve(one.value);
      else queued.reject(one.error);
    });
  }
}
