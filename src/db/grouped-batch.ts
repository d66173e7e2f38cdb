/**
 * Group commit for D1: statements asked for while a batch is on its way go together in
 * the next one, so callers that finish at about the same time (the webhook outcomes of
 * one consumer batch) cost one round trip between them instead of one each. Each caller's
 * statements stay together and in order and it gets its own results back; a batch that
 * fails fails every caller in it (D1 runs a batch as one transaction, so none of it was
 * written).
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client";

type Statement = BatchItem<"sqlite">;

/** Runs `statements` in the next shared batch; answers their results, in order. */
export type GroupedBatch = (statements: readonly Statement[]) => Promise<unknown[]>;

interface Waiting {
  statements: readonly Statement[];
  resolve: (results: unknown[]) => void;
  reject: (err: unknown) => void;
}

export function groupedBatch(d: Db): GroupedBatch {
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async () => {
    while (waiting.length > 0) {
      const taken = waiting;
      waiting = [];
      try {
        const all = taken.flatMap((caller) => caller.statements);
        const results = await d.batch(all as unknown as [Statement, ...Statement[]]) as unknown[];
        let at = 0;
        for (const caller of taken) {
          caller.resolve(results.slice(at, at + caller.statements.length));
          at += caller.statements.length;
        }
      } catch (err) {
        for (const caller of taken) caller.reject(err);
      }
    }
    flushing = null;
  };
  return (statements) => new Promise((resolve, reject) => {
    if (statements.length === 0) {
      resolve([]);
      return;
    }
    waiting.push({ statements, resolve, reject });
    // Started a turn later, so callers asking in the same turn share the first batch too.
    flushing ??= Promise.resolve().then(flush);
  });
}
