/**
 * The shape of one MCP tool and the few helpers every tool group shares: a tool is a
 * name, title, description, the hints of WIRE-MCP §1.7, a strict zod object for its
 * arguments and a `run` that returns the value to show. Argument checking happens here,
 * not in the SDK: the SDK is handed a schema that advertises the real JSON Schema in
 * tools/list but lets every value through, and `checkedArgs` then parses strictly, so a
 * missing, mistyped or unknown argument is answered in the §1.4 shape (`invalid_args`)
 * like every other tool failure instead of an SDK-specific one.
 */
import * as z from "zod";
import type { AgentCaller } from "../auth/callers";
import { parseWith } from "../http/plain-issues";
import { callRelay, type RelayCaller, type RelayRequest } from "./relay-call";
import { invalidArgs } from "./results";

/** What a tool may use: the relay in process, as the caller. */
export interface ToolHost {
  relay: RelayCaller;
  caller: AgentCaller;
}

/** The four hints of WIRE-MCP §1.7, written as there: T, F, or - for not set. */
type Hint = "T" | "F" | "-";
export interface ToolAnnotations {
  title: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export function hints(title: string, readOnly: Hint, destructive: Hint, idempotent: Hint, openWorld: Hint): ToolAnnotations {
  const flag = (hint: Hint) => (hint === "-" ? undefined : hint === "T");
  const entries = { readOnlyHint: flag(readOnly), destructiveHint: flag(destructive), idempotentHint: flag(idempotent), openWorldHint: flag(openWorld) };
  return { title, ...Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)) };
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  input: S;
  /** The value to show (a string is shown as is, anything else as JSON). */
  run(args: z.infer<S>, host: ToolHost): Promise<unknown>;
}

export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

/** The arguments parsed strictly against the tool's schema; any refusal is `invalid_args`. */
export function checkedArgs<S extends z.ZodObject>(tool: ToolDef<S>, args: unknown): z.infer<S> {
  return parseWith(tool.input, args ?? {}, "body", [], "invalid_args");
}

/** A required string: present and not empty (WIRE-MCP §1.8: "" counts as missing). */
export const required = z.string().min(1);

/** Throws `invalid_args` unless each named field is present (and a string is not ""). */
export function need<T extends Record<string, unknown>>(args: T, action: string, ...fields: (keyof T & string)[]): void {
  const missing = fields.filter((field) => args[field] === undefined || args[field] === null || args[field] === "");
  if (missing.length > 0) throw invalidArgs(`${action} needs ${missing.join(" and ")}`);
}

/** The action table of a multi-action tool; an action without an entry is refused as §1.4 says. */
export function byAction<A extends { action: string }>(tool: string, table: Partial<Record<A["action"], (args: A, host: ToolHost) => Promise<unknown>>>) {
  return (args: A, host: ToolHost): Promise<unknown> => {
    const handler = table[args.action as A["action"]];
    if (!handler) throw invalidArgs(`unknown ${tool} action '${args.action}'`);
    return handler(args, host);
  };
}

/** The relay's answer to one route call made as the caller. */
export function relay(host: ToolHost, request: RelayRequest): Promise<unknown> {
  return callRelay(host.relay, request);
}

/** Keeps only the fields that are set (absent optional fields stay out of bodies, §1.8). */
export function present<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * WIRE-MCP §1.8's repair of a `data` or `manifest` string: JSON text of an object becomes
 * the object, JSON text of anything else stays the original string, and text that is not
 * JSON is refused.
 */
export function repaired(value: unknown, field: string): unknown {
  if (typeof value !== "string") return value;
  let parsed: unknown;
  try { parsed = JSON.parse(value); } catch { throw invalidArgs(`${field} is a string that is not JSON; send the value itself, or JSON text of an object`); }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : value;
}
