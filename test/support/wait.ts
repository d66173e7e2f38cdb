// Waiting in tests, shared by every project (plain TypeScript with no Node or Worker
// imports, so it runs in workerd and in Node alike).
//
// A test that waits for something polls for it with `waitFor`: it goes on as soon as the
// condition holds, and fails with a message (or the condition's own last error) when it
// never does. Only two kinds of wait are about time itself, and each has its own name:
//   - `clockPast`: the wall clock must read a later millisecond (or second, or window)
//     than a given instant, because the code under test orders or compares timestamps;
//   - `quietFor`: a negative check, "nothing happens within `ms`", which can only be
//     proved by letting that time pass.

export interface WaitForOptions {
  /** How long to keep trying, in ms (default 5000). */
  timeout?: number;
  /** The pause between two tries, in ms (default 20). */
  interval?: number;
  /** What the failure says when the condition never held (and never threw). */
  message?: string;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` until it returns a truthy value and resolves with that value. A
 * condition that throws counts as not yet; when time runs out, its last error is thrown
 * (so an `expect` inside keeps its own message), or else an Error naming `message`.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, { timeout = 5000, interval = 20, message = "condition" }: WaitForOptions = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout;
  for (;;) {
    let lastError: unknown = null;
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      if (lastError) throw lastError;
      throw new Error(`waitFor: ${message} did not hold within ${timeout} ms`);
    }
    await pause(interval);
  }
}

/**
 * A time wait, not a condition wait: resolves once the wall clock reads a later unit
 * (`unitMs`, default one millisecond) than `instant` (default now). For tests whose
 * subject compares timestamps: two writes must not share a millisecond, a token issued
 * in whole seconds must be in an earlier second, a fixed limiter window must roll over,
 * an expiry must be in the past. The clock itself is the condition, so it is read again
 * after each pause rather than trusted to have moved.
 */
export async function clockPast(instant: number = Date.now(), unitMs = 1): Promise<void> {
  const target = (Math.floor(instant / unitMs) + 1) * unitMs;
  for (let now = Date.now(); now < target; now = Date.now()) await pause(Math.max(1, target - now));
}

/**
 * A time wait, not a condition wait: lets `ms` pass so a test can then check that nothing
 * arrived, closed or changed meanwhile. A negative ("nothing happens") can only be shown
 * by waiting; use it for that alone, never to let something finish.
 */
export async function quietFor(ms: number): Promise<void> {
  await pause(ms);
}
