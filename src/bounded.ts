/**
 * A bound on how much of some work runs at once (the webhook sends of one consumer batch):
 * work past the bound waits its turn, and a finished piece hands its place straight to the
 * next one waiting, so the bound holds without polling.
 */

/** Runs each piece of work given to it with at most `limit` running at a time. */
export type Limiter = <T>(work: () => Promise<T>) => Promise<T>;

export function limiter(limit: number): Limiter {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}
