// What the `data` verbs share. `service data <app> <collection> <verb> [key] [flags]` is
// one command in the table (its first argument is an app, not a verb, so it cannot be a
// noun): data.ts parses the union of every verb's flags, then picks the verb here and
// refuses any flag that verb does not take. Each verb is a DataVerb: its flags, whether
// it takes a row key, and a run that gets the resolved collection path (WIRE §2.3).
import { stringFlag, type FlagSpec } from "../../argv.ts";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { CliError, invalidArgs } from "../../errors.ts";
import { readStdin } from "../../input.ts";
import type { CommandContext } from "../types.ts";
import { target, type Target } from "../apps/common.ts";

/** The help command every data argv error points at. */
export const DATA_HELP = "service data";

export interface DataVerb {
  verb: string;
  /** The verb's own usage after `service data <app> <collection>`, e.g. `get <key>`. */
  usage: string;
  summary: string;
  /**
   * The row key: not taken, required as the argument, or given either as the argument
   * or with --key (spec C names `--key` for restore and purge).
   */
  key: "none" | "arg" | "arg-or-flag";
  flags: FlagSpec[];
  run(ctx: DataContext): Promise<void | number>;
}

export interface DataContext extends CommandContext {
  /** The `<app>` argument as typed. */
  appArg: string;
  collection: string;
  /** The row key, for verbs that take one. */
  key: string;
  /** `service data <app> <collection> <verb>`, for messages. */
  line: string;
  /** Resolves the app and returns the collection's API path `/v1/apps/:id/collections/:name`. */
  open(): Promise<CollectionTarget>;
}

export interface CollectionTarget extends Target {
  /** `/v1/apps/<id>/collections/<name>`. */
  base: string;
}

export function collectionTarget(ctx: CommandContext, app: string, collection: string): () => Promise<CollectionTarget> {
  return async () => {
    const t = await target(ctx, app);
    return { ...t, base: `${t.path}/collections/${encodeURIComponent(collection)}` };
  };
}

/** `/<key>` for a row path. */
export function rowPath(base: string, key: string, suffix = ""): string {
  return `${base}/${encodeURIComponent(key)}${suffix}`;
}

export function argError(message: string, flag?: string): CliError {
  return invalidArgs(message, DATA_HELP, flag ? { flag } : undefined);
}

/** A whole number flag within [min, max], or undefined when absent. */
export function intFlag(ctx: DataContext, name: string, min: number, max: number): number | undefined {
  const value = stringFlag(ctx.flags, name);
  if (value === undefined) return undefined;
  if (!/^-?[0-9]+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw argError(`--${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}.`, `--${name}`);
  }
  return Number(value);
}

function parseJson(text: string, what: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw argError(`${what} is not valid JSON: ${(err as Error).message}`, flag);
  }
}

/**
 * A JSON value from a flag: `-` reads stdin (refused on a terminal), `@<path>` reads a
 * file, a value that parses as JSON is used as is, and anything else must be a file.
 */
export async function jsonInput(ctx: DataContext, flag: string): Promise<unknown> {
  const value = stringFlag(ctx.flags, flag);
  if (value === undefined) throw argError(`${ctx.line} needs --${flag} <json|@file|path|->.`, `--${flag}`);
  if (value === "-") {
    if (ctx.stdin.isTTY) throw argError(`Refusing to read --${flag} from a terminal; pipe the JSON in.`, `--${flag}`);
    const text = await readStdin(ctx.stdin);
    if (!text.trim()) throw argError(`Nothing was read from stdin for --${flag}.`, `--${flag}`);
    return parseJson(text, `--${flag} (stdin)`, `--${flag}`);
  }
  if (value.startsWith("@")) return parseJson(readFileArg(value.slice(1), flag), `--${flag} ${value}`, `--${flag}`);
  try {
    return JSON.parse(value);
  } catch {
    /* not inline JSON: a path */
  }
  const looksInline = /^\s*[{["]/.test(value);
  if (looksInline || !isFile(value)) {
    throw argError(`--${flag} is neither valid JSON nor a readable file: ${JSON.stringify(value.slice(0, 80))}.`, `--${flag}`);
  }
  return parseJson(readFileArg(value, flag), `--${flag} ${value}`, `--${flag}`);
}

function isFile(file: string): boolean {
  try {
    return statSync(path.resolve(file)).isFile();
  } catch {
    return false;
  }
}

/** A file's text for a flag, or invalid_args naming the file. */
export function readFileArg(file: string, flag: string): string {
  if (!file || !isFile(file)) throw argError(`--${flag}: no such file ${JSON.stringify(file)}.`, `--${flag}`);
  return readFileSync(path.resolve(file), "utf8");
}

export const KEY_ARG_DESCRIPTION = "the row's key";
