// The shared flag parser. Every verb declares its flags and positional arguments as data;
// this module enforces the rules of WIRE §6.6 once: `--flag value` and `--flag=value`,
// a repeated flag is an error, an unknown flag is rejected per verb, and every argv error
// is `invalid_args` with a hint naming the verb's `--help`.
import { invalidArgs } from "./errors.ts";

export interface FlagSpec {
  /** Long name without the dashes, e.g. "api-key". */
  name: string;
  kind: "string" | "boolean";
  /** Single-letter alias without the dash, e.g. "h". */
  short?: string;
  /** Placeholder shown in help for string flags. */
  value?: string;
  description: string;
  /** A string flag that may be given more than once (WIRE §6.6: only `--asset`); its values collect in order. */
  repeatable?: boolean;
}

export interface ArgSpec {
  name: string;
  required: boolean;
  description: string;
}

export type FlagValues = Record<string, string | true | string[] | undefined>;

export interface Parsed {
  flags: FlagValues;
  args: string[];
}

/** Flags every command accepts (spec C "Global behaviour"). */
export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "url", kind: "string", value: "<url>", description: "relay base URL (overrides SERVICE_URL and the profile)" },
  { name: "api-key", kind: "string", value: "<key>", description: "agent API key (overrides SERVICE_API_KEY and the profile)" },
  { name: "profile", kind: "string", value: "<name>", description: "profile to use (overrides SERVICE_PROFILE and the current profile)" },
  { name: "json", kind: "boolean", description: "accepted for compatibility; output is always JSON" },
  { name: "help", kind: "boolean", short: "h", description: "show help for this command and exit" },
];

const GLOBAL_VALUE_FLAGS = new Set(GLOBAL_FLAGS.filter((f) => f.kind === "string").map((f) => `--${f.name}`));

/**
 * Finds the command words (noun, verb) among the tokens before any verb flags are known.
 * Global flags may come first (`service --url X key list`); their values are skipped.
 * Returns the words and the remaining tokens in their original order.
 */
export function splitCommand(tokens: string[], maxWords = 2): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let i = 0;
  for (; i < tokens.length && words.length < maxWords; i++) {
    const token = tokens[i];
    if (token === "--") break;
    if (token.startsWith("-") && token !== "-") {
      rest.push(token);
      if (GLOBAL_VALUE_FLAGS.has(token) && i + 1 < tokens.length) rest.push(tokens[++i]);
      continue;
    }
    words.push(token);
  }
  rest.push(...tokens.slice(i));
  return { words, rest };
}

/** True when -h/--help appears anywhere before a `--` terminator. */
export function wantsHelp(tokens: string[]): boolean {
  for (const token of tokens) {
    if (token === "--") return false;
    if (token === "-h" || token === "--help") return true;
  }
  return false;
}

export function parseArgs(tokens: string[], specs: FlagSpec[], argSpecs: ArgSpec[], helpCommand: string): Parsed {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const flags: FlagValues = {};
  const args: string[] = [];

  const set = (spec: FlagSpec, value: string | true, written: string) => {
    if (spec.repeatable && spec.kind === "string" && typeof value === "string") {
      if (value === "") throw invalidArgs(`The flag ${written} needs a non-empty value.`, helpCommand, { flag: `--${spec.name}` });
      const list = flags[spec.name];
      flags[spec.name] = [...(Array.isArray(list) ? list : []), value];
      return;
    }
    if (flags[spec.name] !== undefined) throw invalidArgs(`The flag --${spec.name} was given more than once.`, helpCommand, { flag: `--${spec.name}` });
    if (spec.kind === "string" && typeof value === "string" && value === "" ) {
      throw invalidArgs(`The flag ${written} needs a non-empty value.`, helpCommand, { flag: `--${spec.name}` });
    }
    flags[spec.name] = value;
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === "--") {
      args.push(...tokens.slice(i + 1));
      break;
    }
    if (token.startsWith("--")) {
      const eq = token.indexOf("=");
      const name = eq === -1 ? token.slice(2) : token.slice(2, eq);
      const spec = byName.get(name);
      if (!spec) throw invalidArgs(`Unknown flag --${name} for \`${helpCommand}\`.`, helpCommand, { flag: `--${name}` });
      if (spec.kind === "boolean") {
        if (eq !== -1) throw invalidArgs(`The flag --${name} takes no value.`, helpCommand, { flag: `--${name}` });
        set(spec, true, token);
      } else if (eq !== -1) {
        set(spec, token.slice(eq + 1), `--${name}`);
      } else {
        if (i + 1 >= tokens.length) throw invalidArgs(`The flag --${name} needs a value.`, helpCommand, { flag: `--${name}` });
        set(spec, tokens[++i], token);
      }
      continue;
    }
    if (token.startsWith("-") && token.length > 1) {
      const spec = byShort.get(token.slice(1));
      if (!spec) throw invalidArgs(`Unknown flag ${token} for \`${helpCommand}\`.`, helpCommand, { flag: token });
      if (spec.kind === "boolean") set(spec, true, token);
      else {
        if (i + 1 >= tokens.length) throw invalidArgs(`The flag ${token} needs a value.`, helpCommand, { flag: token });
        set(spec, tokens[++i], token);
      }
      continue;
    }
    args.push(token);
  }

  const required = argSpecs.filter((a) => a.required).length;
  if (args.length < required) {
    const missing = argSpecs.slice(args.length).filter((a) => a.required).map((a) => `<${a.name}>`);
    throw invalidArgs(`Missing argument ${missing.join(" ")}.`, helpCommand);
  }
  if (args.length > argSpecs.length) {
    throw invalidArgs(`Unexpected argument ${JSON.stringify(args[argSpecs.length])}.`, helpCommand);
  }
  return { flags, args };
}

export function stringFlag(flags: FlagValues, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}

/** Every value of a repeatable flag, in the order given (empty when absent). */
export function listFlag(flags: FlagValues, name: string): string[] {
  const value = flags[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

export function boolFlag(flags: FlagValues, name: string): boolean {
  return flags[name] === true;
}
