// An archive import over /v1 held midway, for tests of what is seen while an import is
// in flight: the import runs through the relay's real entry point with the real R2
// bucket behind a gate that holds its first read of a staged rows page. By then the new
// app exists and its attachments are stored, but it has no rows yet; `release` lets the
// import carry on to its answer.
import { env } from "cloudflare:test";
import { callWith } from "../helpers";

export interface HeldImport {
  /** Settles once the import has made its app and is about to read its first rows page. */
  reached: Promise<void>;
  /** The import's answer, once released. */
  answer: Promise<Response>;
  release(): void;
}

const STAGED_ROWS = /^imports\/[^/]+\/rows\//;

/** `overrides` are extra bindings for the import's request (e.g. a lower app cap). */
export function heldImport(key: string, archive: Uint8Array, overrides: Record<string, unknown> = {}): HeldImport {
  let reachedGate!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => { reachedGate = resolve; });
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const bucket = env.BLOBS;
  const gated = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return async (objectKey: string, options?: R2GetOptions) => {
          if (STAGED_ROWS.test(objectKey)) {
            reachedGate();
            await gate;
          }
          return target.get(objectKey, options);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const answer = callWith({ ...overrides, BLOBS: gated }, "/v1/apps/import", { key, method: "POST", body: archive, contentType: "application/x-tar" });
  // An import refused before it made its app never reaches the gate: let the test see why.
  void answer.then(() => reachedGate(), () => reachedGate());
  return { reached, answer, release };
}
