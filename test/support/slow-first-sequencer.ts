// The order test files start in. Two slots share every parallel project's files, and the
// parallel phase ends only when its last file does: on a fresh clone (no timings cached)
// vitest starts the largest files first, and the permission matrix over HTTP, a small file
// that runs for three to four minutes, started late and ran alone for over two minutes at
// the end. The files known to run longest start first, in this order; the rest keep
// vitest's own order after them.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first: the HTTP permission matrix, then the kill-and-restart suites (each starts relays of its own). */
const LONG_RUNNING = [/\/test\/worker\/access\/matrix-http\.test\.ts$/, /\/test\/reliability\//];

function rank(spec: TestSpecification): number {
  const index = LONG_RUNNING.findIndex((pattern) => pattern.test(spec.moduleId));
  return index === -1 ? LONG_RUNNING.length : index;
}

export class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted.map((spec, place) => ({ spec, place }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.place - b.place)
      .map(({ spec }) => spec);
  }
}
