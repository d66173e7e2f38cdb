// Free text for a verb (taste notes, a feedback message) from the places spec C allows: a
// file path, `-` for stdin, or stdin piped in when no source flag was given. Stdin is
// never read from a terminal, where it would wait for typing nobody expects.
import { readFileSync, statSync } from "node:fs";
import { invalidArgs } from "./errors.ts";
import { readStdin } from "./input.ts";
import type { CommandContext } from "./commands/types.ts";

/** Stdin as text for `--flag -`, refused on a terminal. */
export async function stdinText(ctx: CommandContext, flag: string): Promise<string> {
  if (ctx.stdin.isTTY) throw invalidArgs(`--${flag} - reads stdin, but stdin is a terminal; pipe the text in.`, ctx.command, { flag: `--${flag}` });
  return readStdin(ctx.stdin);
}

/** The contents of `--<flag> <path>`, or stdin for `-`; undefined when the flag is absent. */
export async function fileOrStdin(ctx: CommandContext, flag: string, value: string | undefined): Promise<string | undefined> {
  if (value === undefined) return undefined;
  if (value === "-") return stdinText(ctx, flag);
  try {
    if (!statSync(value).isFile()) throw new Error("not a file");
    return readFileSync(value, "utf8");
  } catch {
    throw invalidArgs(`--${flag} ${JSON.stringify(value)} is not a readable file.`, ctx.command, { flag: `--${flag}` });
  }
}

/** Stdin when something is piped in and no source flag was given; undefined on a terminal. */
export async function pipedStdin(ctx: CommandContext): Promise<string | undefined> {
  return ctx.stdin.isTTY ? undefined : readStdin(ctx.stdin);
}
