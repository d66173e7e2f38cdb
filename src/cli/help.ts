// Help text, generated from the command table so it cannot drift from what the parser
// accepts. main.ts answers -h/--help here for the program, every noun and every verb,
// before any flag validation and without running the command.
import { GLOBAL_FLAGS, type FlagSpec } from "./argv.ts";
import { COMMANDS, NOUNS } from "./commands/registry.ts";
import type { Command, Noun } from "./commands/types.ts";
import { DEFAULT_URL } from "./context.ts";

/** "service <noun> <verb>", or "service <word>" for a command without a verb. */
export function commandName(cmd: Command): string {
  return cmd.verb ? `service ${cmd.noun} ${cmd.verb}` : `service ${cmd.noun}`;
}

function table(rows: [string, string][]): string[] {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

function flagRows(flags: FlagSpec[]): [string, string][] {
  return flags.map((f) => {
    const names = f.short ? `-${f.short}, --${f.name}` : `--${f.name}`;
    return [f.kind === "string" ? `${names} ${f.value ?? "<value>"}` : names, f.description];
  });
}

export function programHelp(version: string): string {
  return [
    `service ${version}: the command-line client of the relay`,
    "",
    "Usage: service <noun> <verb> [arguments] [flags]",
    "",
    "Commands:",
    ...table([
      ...COMMANDS.map((c): [string, string] => [c.noun, c.summary]),
      ...NOUNS.flatMap((n) => n.verbs.map((v): [string, string] => [`${n.name} ${v.verb}`, v.summary])),
    ]),
    "",
    "Global flags (every command):",
    ...table([...flagRows(GLOBAL_FLAGS), ["-v, --version", "print the CLI version (first argument only)"]]),
    "",
    "Environment:",
    ...table([
      ["SERVICE_URL", "relay URL (below --url, above the profile)"],
      ["SERVICE_API_KEY", "API key (below --api-key, above the profile)"],
      ["SERVICE_PROFILE", "profile name (below --profile, above the current profile)"],
      ["SERVICE_REGISTER_SECRET", "registration secret for `agent register`"],
      ["XDG_CONFIG_HOME", "config lives in $XDG_CONFIG_HOME/service (default ~/.config/service)"],
    ]),
    "",
    `Default relay when nothing is set: ${DEFAULT_URL}`,
    "Output: JSON on stdout; errors as one JSON line on stderr. Exit 0 ok, 1 error, 75 upgrade required.",
    "Run `service <noun> --help` or `service <noun> <verb> --help` for details.",
  ].join("\n");
}

export function nounHelp(noun: Noun): string {
  return [
    `service ${noun.name}: ${noun.summary}`,
    "",
    `Usage: service ${noun.name} <verb> [arguments] [flags]`,
    "",
    "Verbs:",
    ...table(noun.verbs.map((v): [string, string] => [v.verb, v.summary])),
    "",
    `Run \`service ${noun.name} <verb> --help\` for a verb's flags.`,
  ].join("\n");
}

export function verbHelp(cmd: Command): string {
  const usageArgs = cmd.args.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
  const lines = [
    `${commandName(cmd)}: ${cmd.summary}`,
    "",
    `Usage: ${commandName(cmd)}${usageArgs ? ` ${usageArgs}` : ""} [flags]`,
  ];
  if (cmd.description) lines.push("", cmd.description);
  if (cmd.args.length > 0) {
    lines.push("", "Arguments:", ...table(cmd.args.map((a): [string, string] => [`<${a.name}>`, a.description])));
  }
  if (cmd.flags.length > 0) lines.push("", "Flags:", ...table(flagRows(cmd.flags)));
  lines.push("", "Global flags:", ...table(flagRows(GLOBAL_FLAGS)));
  if (cmd.examples?.length) lines.push("", "Examples:", ...cmd.examples.map((e) => `  ${e}`));
  return lines.join("\n");
}
