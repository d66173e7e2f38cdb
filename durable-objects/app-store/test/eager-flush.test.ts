// EagerFlush (outbox.ts): the commit's own hand-over of the outbox. Requests that arrive
// while a flush runs make it go round exactly once more (so what they committed is taken,
// and a burst shares a few sends); flushes never overlap; a failing flush ends quietly,
// leaving the retry to the alarm.
import { describe, expect, it } from "vitest";
import { EagerFlush } from "../outbox";

/** A flush that runs only when released, counting its passes and any overlap. */
function gatedFlush() {
  const gates: Array<() => void> = [];
  let running = 0;
  const seen = { passes: 0, overlapped: false };
  const flush = async () => {
    running += 1;
    if (running > 1) seen.overlapped = true;
    seen.passes += 1;
    await new Promise<void>((release) => gates.push(release));
    running -= 1;
  };
  /** Releases the pass that is waiting, once it is. */
  const releaseNext = async () => {
    while (gates.length === 0) await Promise.resolve();
    gates.shift()!();
  };
  return { flush, seen, releaseNext };
}

describe("EagerFlush", () => {
  it("a burst of requests while a flush runs costs one more pass, never an overlapping one", async () => {
    const gated = gatedFlush();
    const eager = new EagerFlush(gated.flush);
    const first = eager.request();
    const during = [eager.request(), eager.request(), eager.request()];
    await gated.releaseNext();
    await gated.releaseNext();
    await Promise.all([first, ...during]);
    expect(gated.seen).toEqual({ passes: 2, overlapped: false });
    // Idle again: the next request starts a new flush of its own.
    const later = eager.request();
    await gated.releaseNext();
    await later;
    expect(gated.seen.passes).toBe(3);
  });

  it("settled() waits for the running flush, and answers at once when none runs", async () => {
    const gated = gatedFlush();
    const eager = new EagerFlush(gated.flush);
    await eager.settled();
    void eager.request();
    let settled = false;
    const waiting = eager.settled().then(() => { settled = true; });
    await Promise.resolve();
    expect(settled).toBe(false);
    await gated.releaseNext();
    await waiting;
    expect(settled).toBe(true);
  });

  it("a flush that throws ends the pass without rejecting the request", async () => {
    let calls = 0;
    const eager = new EagerFlush(async () => { calls += 1; throw new Error("queue down"); });
    await expect(eager.request()).resolves.toBeUndefined();
    await expect(eager.request()).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
