// Secrets given on the command line (WIRE §6.6 "secrets on argv"): `-` reads the value
// from stdin (refused on a terminal, where it would hang or echo), a literal value works
// but warns, because argv leaks through shell history and process lists.
import { invalidArgs } from "./errors.ts";
import type { CommandContext } from "./commands/types.ts";

export async function readStdin(stdin: CommandContext["stdin"]): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The secret for `what` from a flag or argument value: `-` means stdin. Returns the value
 * trimmed of surrounding whitespace (a trailing newline from `echo` is common).
 */
export async function secretValue(ctx: CommandContext, value: string, what: string, literalAdvice: string): Promise<string> {
  if (value === "-") {
    if (ctx.stdin.isTTY) throw invalidArgs(`Refusing to read the ${what} from a terminal; pipe it in, e.g. \`printenv KEY | ${ctx.command} -\`.`, ctx.command);
    const text = (await readStdin(ctx.stdin)).trim();
    if (!text) throw invalidArgs(`Nothing was read from stdin for the ${what}.`, ctx.command);
    return text;
  }
  ctx.out.warn(`passing the ${what} as a literal argument exposes it in shell history and process lists; ${literalAdvice}`);
  return value.trim();
}
