// Builders and a table runner shared by the manifest tests: a small valid manifest that
// each case changes in one place, and an assertion on the ONE error code and path.
import { expect, it } from "vitest";
import { RelayError } from "../../../src/errors";
import { parseManifest, type CompiledManifest, type ManifestContext, type ManifestLimits } from "../../../src/manifest";

export const NOTE_DEFS = {
  Note: {
    type: "object",
    required: ["title"],
    properties: {
      title: { type: "string", maxLength: 200 },
      body: { type: "string" },
      done: { type: "boolean" },
      owner_id: { type: "string" },
      email: { type: "string", format: "email" },
      due: { type: "string" },
      slug: { type: "string" },
      price: { type: "number" },
      qty: { type: "integer" },
      tags: { type: "array", items: { type: "string" } },
      hook_url: { type: "string" },
    },
  },
};

type Obj = Record<string, unknown>;

export function manifest(ext: Obj = {}, defs: Obj | null = NOTE_DEFS): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    ...(defs ? { $defs: defs } : {}),
    "x-service-manifest": { app: { name: "Test app" }, ...ext },
  };
}

/** A valid owner-only collection over the Note schema; `over` replaces keys (undefined removes). */
export function notes(over: Obj = {}): Obj {
  const base: Obj = { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"], ...over };
  for (const k of Object.keys(base)) if (base[k] === undefined) delete base[k];
  return base;
}

/** A manifest holding one collection `notes` (plus extra top-level keys). */
export function withNotes(over: Obj = {}, ext: Obj = {}): Obj {
  return manifest({ collections: { notes: notes(over) }, ...ext });
}

export function errorOf(fn: () => unknown): RelayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RelayError) return err;
    throw err;
  }
  throw new Error("expected a RelayError, but nothing was thrown");
}

export interface Case {
  name: string;
  input: unknown;
  /** Absent: the manifest must compile. */
  code?: string;
  path?: string;
  limits?: ManifestLimits;
  context?: ManifestContext;
  check?: (compiled: CompiledManifest) => void;
}

export function table(cases: Case[]): void {
  for (const c of cases) {
    it(c.code ? `${c.name} → ${c.code} at ${c.path}` : `${c.name} → compiles`, () => {
      if (c.code) {
        const err = errorOf(() => parseManifest(c.input, c.limits, c.context));
        expect({ code: err.code, path: err.details?.path }).toEqual({ code: c.code, path: c.path });
      } else {
        const compiled = parseManifest(c.input, c.limits, c.context);
        c.check?.(compiled);
      }
    });
  }
}

export const C = "x-service-manifest.collections.notes";
export const X = "x-service-manifest";
