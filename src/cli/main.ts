// Entry point of the `service` CLI (run by bin/service). Finds the command in the table,
// answers -v/--version and -h/--help centrally, parses flags against the verb's
// declaration, runs it, and is the ONE place that turns errors into stderr output and
// an exit code (0 ok, 1 error, 75 upgrade required).
import { GLOBAL_FLAGS, parseArgs, splitCommand, wantsHelp } from "./argv.ts";
import { COMMANDS, findCommand, findNoun, NOUNS } from "./commands/registry.ts";
import type { Command, CommandContext } from "./commands/types.ts";
import { ConfigStore } from "./config-store.ts";
import { resolve } from "./context.ts";
import { CliError, invalidArgs } from "./errors.ts";
import { commandName, nounHelp, programHelp, verbHelp } from "./help.ts";
import { RelayClient } from "./http.ts";
import { createOutput, type Output, type Streams } from "./output.ts";
import { dailyCheck } from "./skill-freshness.ts";
import { announcedVersion, cliVersion } from "./version.ts";

export interface MainIo extends Streams {
  stdin: CommandContext["stdin"];
  env: NodeJS.ProcessEnv;
}

/** Every word that can start a command: the verb-less commands (deploy, data) and the nouns. */
function topLevelWords(): string[] {
  return [...COMMANDS.map((c) => c.noun), ...NOUNS.map((n) => n.name)];
}

function unknownCommand(message: string, helpCommand: string): CliError {
  return new CliError("unknown_command", message, { hint: `Run \`${helpCommand} --help\` to see the commands.` });
}

export async function main(argv: string[], io: MainIo): Promise<number> {
  const out = createOutput(io);
  try {
    if (argv[0] === "-v" || argv[0] === "--version") {
      out.text(cliVersion());
      return 0;
    }
    const help = wantsHelp(argv);
    const { words, rest } = splitCommand(argv);
    if (words.length === 0) {
      if (help || argv.length === 0) {
        out.text(programHelp(cliVersion()));
        return 0;
      }
      parseArgs(rest, GLOBAL_FLAGS, [], "service");
      throw invalidArgs("No command given.", "service");
    }
    // A command without a verb (`service deploy [dir] [flags]`): everything after its word is its own.
    const single = findCommand(words[0]);
    if (single) {
      if (help) {
        out.text(verbHelp(single));
        return 0;
      }
      return await run(single, splitCommand(argv, 1).rest, io, out);
    }
    const noun = findNoun(words[0]);
    if (!noun) throw unknownCommand(`Unknown command ${JSON.stringify(words[0])}; the commands are ${topLevelWords().join(", ")}.`, "service");
    const verb = words[1] === undefined ? undefined : noun.verbs.find((v) => v.verb === words[1]);
    if (!verb) {
      if (help) {
        out.text(nounHelp(noun));
        return 0;
      }
      const verbs = noun.verbs.map((v) => v.verb).join(", ");
      throw unknownCommand(
        words[1] === undefined ? `\`service ${noun.name}\` needs a verb: ${verbs}.` : `Unknown command "service ${noun.name} ${words[1]}"; the verbs are ${verbs}.`,
        `service ${noun.name}`,
      );
    }
    if (help) {
      out.text(verbHelp(verb));
      return 0;
    }

    return await run(verb, rest, io, out);
  } catch (err) {
    const error = err instanceof CliError ? err : new CliError("internal", `Unexpected failure: ${err instanceof Error ? err.message : String(err)}`, {
      hint: "This is a bug in the CLI; please report it with the command you ran.",
    });
    out.error(error);
    return error.exitCode;
  }
}

/** Parses a command's flags and arguments, runs it, then the daily skill check. */
async function run(verb: Command, rest: string[], io: MainIo, out: Output): Promise<number> {
  const command = commandName(verb);
  const parsed = parseArgs(rest, [...verb.flags, ...GLOBAL_FLAGS], verb.args, command);
  const store = new ConfigStore(io.env);
  let lastRelay: RelayClient | null = null;
  const ctx: CommandContext = {
    command,
    flags: parsed.flags,
    args: parsed.args,
    env: io.env,
    out,
    store,
    stdin: io.stdin,
    resolve: (options) => resolve(parsed.flags, io.env, store.readConfig(), command, options),
    relay: (url) => (lastRelay = new RelayClient(url, announcedVersion(io.env))),
  };
  const code = await verb.run(ctx);
  if (verb.skillCheck && lastRelay) await dailyCheck(store, lastRelay, out);
  return typeof code === "number" ? code : 0;
}
