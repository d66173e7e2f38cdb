// "CLI commands as data": a verb is a plain object — its words, help text, flags and
// positional arguments, and a run function. main.ts parses argv against this
// declaration, answers --help from it, and hands run() a ready context.
import type { ArgSpec, FlagSpec, FlagValues } from "../argv.ts";
import type { ConfigStore } from "../config-store.ts";
import type { ResolveOptions, Resolved } from "../context.ts";
import type { RelayClient } from "../http.ts";
import type { Output } from "../output.ts";

export interface CommandContext {
  /** "service <noun> <verb>", for messages and help hints. */
  command: string;
  flags: FlagValues;
  args: string[];
  env: NodeJS.ProcessEnv;
  out: Output;
  store: ConfigStore;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Profile, URL and key by the precedence of WIRE §6.6. */
  resolve(options?: ResolveOptions): Resolved;
  /** An HTTP client for the relay at `url`; remembered for the skill freshness check. */
  relay(url: string): RelayClient;
}

export interface Command {
  /** The first word; for a command without a verb (`deploy`), its only word. */
  noun: string;
  /** The second word, or "" for a command without a verb (listed in COMMANDS, not NOUNS). */
  verb: string;
  /** One line for the noun's verb list. */
  summary: string;
  /** Extra paragraphs for the verb's own help. */
  description?: string;
  flags: FlagSpec[];
  args: ArgSpec[];
  examples?: string[];
  /**
   * Whether main.ts may run the once-a-day skill version check after this command
   * succeeds (false for local-only commands and for the skill verbs themselves).
   */
  skillCheck: boolean;
  /** Resolves to an exit code only when success is not 0 (`apps audit` with a high finding). */
  run(ctx: CommandContext): Promise<void | number>;
}

export interface Noun {
  name: string;
  summary: string;
  verbs: Command[];
}
