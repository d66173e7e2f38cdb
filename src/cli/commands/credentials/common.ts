// What the `credentials` and `grants` verbs share: the required --app flag resolved to an
// id (WIRE §1.5), a required id flag, whole-number flags, and JSON flags (inline JSON,
// `@file`, a path, or `-` for stdin).
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { readStdin } from "../../input.ts";
import type { FlagSpec } from "../../argv.ts";
import type { CommandContext } from "../types.ts";
import { target, type Target } from "../apps/common.ts";

export const APP_FLAG: FlagSpec = { name: "app", kind: "string", value: "<app>", description: "the app's id or slug (required)" };

/** A flag the verb cannot run without. */
export function requiredFlag(ctx: CommandContext, name: string): string {
  const value = stringFlag(ctx.flags, name);
  if (value === undefined || value.trim() === "") throw invalidArgs(`\`${ctx.command}\` needs --${name}.`, ctx.command, { flag: `--${name}` });
  return value.trim();
}

/** The --app flag resolved to the app's id, with the session to call it. */
export async function appTarget(ctx: CommandContext): Promise<Target> {
  return target(ctx, requiredFlag(ctx, "app"));
}

/** A whole-number flag within [min, max], or undefined when absent. */
export function wholeFlag(ctx: CommandContext, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = stringFlag(ctx.flags, name);
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw invalidArgs(`--${name} must be a whole number ${range}; got ${JSON.stringify(value)}.`, ctx.command, { flag: `--${name}` });
  }
  return Number(value);
}

function parse(ctx: CommandContext, text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalidArgs(`--${flag} is not valid JSON: ${(err as Error).message}`, ctx.command, { flag: `--${flag}` });
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(path.resolve(file)).isFile();
  } catch {
    return false;
  }
}

/** A JSON flag's value (undefined when absent): inline JSON, `@file`, a file path, or `-` for stdin. */
export async function jsonFlag(ctx: CommandContext, flag: string): Promise<unknown> {
  const value = stringFlag(ctx.flags, flag);
  if (value === undefined) return undefined;
  if (value === "-") {
    if (ctx.stdin.isTTY) throw invalidArgs(`Refusing to read --${flag} from a terminal; pipe the JSON in.`, ctx.command, { flag: `--${flag}` });
    return parse(ctx, await readStdin(ctx.stdin), flag);
  }
  const file = value.startsWith("@") ? value.slice(1) : null;
  if (file !== null) {
    if (!isFile(file)) throw invalidArgs(`--${flag}: no such file ${JSON.stringify(file)}.`, ctx.command, { flag: `--${flag}` });
    return parse(ctx, readFileSync(path.resolve(file), "utf8"), flag);
  }
  try {
    return JSON.parse(value);
  } catch {
    if (!/^\s*[{["]/.test(value) && isFile(value)) return parse(ctx, readFileSync(path.resolve(value), "utf8"), flag);
    throw invalidArgs(`--${flag} is neither valid JSON nor a readable file: ${JSON.stringify(value.slice(0, 80))}.`, ctx.command, { flag: `--${flag}` });
  }
}
