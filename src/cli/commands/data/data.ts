// `service data <app> <collection> <verb> [key] [flags]` (spec C "data"): rows of one
// collection through the relay's row endpoints (WIRE §2.3). The command's first argument
// is an app, so it is a command without a verb in the table (like deploy); this file
// picks the data verb from the third argument, refuses flags that verb does not take,
// settles the row key (argument, or --key for restore and purge) and runs it.
// `service data --help` lists every verb with its own flags.
import { GLOBAL_FLAGS, stringFlag, type FlagSpec } from "../../argv.ts";
import { CliError, invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { collectionTarget, DATA_HELP, KEY_ARG_DESCRIPTION, type DataContext, type DataVerb } from "./common.ts";
import { dataList } from "./list.ts";
import { dataCount } from "./count.ts";
import { dataGet } from "./get.ts";
import { dataUpsert } from "./upsert.ts";
import { dataUpdate } from "./update.ts";
import { dataDelete } from "./delete.ts";
import { dataRestore } from "./restore.ts";
import { dataDeleted } from "./deleted.ts";
import { dataPurge } from "./purge.ts";
import { dataImport } from "./import.ts";
import { dataRetention } from "./retention.ts";

/** The data verbs in help order (spec C's table). */
export const DATA_VERBS: DataVerb[] = [dataList, dataCount, dataGet, dataUpsert, dataUpdate, dataDelete, dataRestore, dataDeleted, dataPurge, dataImport, dataRetention];

/** Every verb's flags once (the first description of a shared flag names all its verbs). */
function unionFlags(verbs: DataVerb[]): FlagSpec[] {
  const byName = new Map<string, FlagSpec>();
  for (const verb of verbs) for (const flag of verb.flags) if (!byName.has(flag.name)) byName.set(flag.name, flag);
  return [...byName.values()];
}

function verbTable(verbs: DataVerb[]): string[] {
  const rows = verbs.map((v) => [v.usage, v.summary]);
  return rows.flatMap(([usage, summary]) => [`  ${usage}`, `      ${summary}`]);
}

const GLOBAL_NAMES = new Set(GLOBAL_FLAGS.map((f) => f.name));

export const data: Command = {
  noun: "data",
  verb: "",
  summary: "rows of an app's collection: list, count, get, upsert, update, delete, restore, deleted, purge, import, retention",
  description: [
    "Verbs (each after `service data <app> <collection>`):",
    ...verbTable(DATA_VERBS),
    "",
    "<app> is the app's id or slug. A verb takes only its own flags (listed below with the verbs that",
    "use them). --data takes inline JSON, @file (or a file path) or - for stdin. Every answer is the",
    "relay's JSON, except delete ({ deleted: true, key }), purge ({ purged: true, key }) and import",
    "({ app, collection, total, imported, failed, chunks, silent, failures: [{ index, key?, error }] }).",
    "import reads NDJSON or a JSON array of row data and writes it through the batch endpoint in",
    "chunks; a bad row is listed in failures and never stops the rest; it is silent (no notify, no",
    "webhooks) unless --emit-effects; progress goes to stderr only when stderr is a terminal.",
  ].join("\n"),
  flags: unionFlags(DATA_VERBS),
  args: [
    { name: "app", required: true, description: "the app's id or slug" },
    { name: "collection", required: true, description: "the collection's name" },
    { name: "verb", required: true, description: DATA_VERBS.map((v) => v.verb).join(", ") },
    { name: "key", required: false, description: `${KEY_ARG_DESCRIPTION} (get, update, delete, restore, purge)` },
  ],
  examples: [
    "service data my-app notes list --where '[{\"field\":\"done\",\"op\":\"eq\",\"value\":false}]' --all",
    "service data my-app notes upsert --data '{\"text\":\"hello\"}'",
    "service data my-app notes update r123 --data @note.json --if-match 2",
    "service data my-app notes delete r123",
    "service data my-app notes import --file notes.ndjson --key-field id",
    "service data my-app notes retention --max-rows 500",
  ],
  skillCheck: true,
  async run(ctx) {
    const [app, collection, verbName, keyArg] = ctx.args;
    const verb = DATA_VERBS.find((v) => v.verb === verbName);
    if (!verb) {
      throw new CliError("unknown_command", `Unknown command "service data <app> <collection> ${verbName}"; the data verbs are ${DATA_VERBS.map((v) => v.verb).join(", ")}.`, {
        hint: "Run `service data --help` to see the verbs and their flags.",
      });
    }
    const line = `service data ${app} ${collection} ${verb.verb}`;
    const own = new Set(verb.flags.map((f) => f.name));
    for (const [name, value] of Object.entries(ctx.flags)) {
      if (value === undefined || GLOBAL_NAMES.has(name) || own.has(name)) continue;
      const takes = verb.flags.length ? `its flags are ${verb.flags.map((f) => `--${f.name}`).join(", ")}` : "it takes no flags";
      throw invalidArgs(`Unknown flag --${name} for \`${line}\`; ${takes}.`, DATA_HELP, { flag: `--${name}` });
    }

    let key = "";
    const flagKey = stringFlag(ctx.flags, "key");
    if (verb.key === "none" && keyArg !== undefined) {
      throw invalidArgs(`Unexpected argument ${JSON.stringify(keyArg)}: \`${verb.usage.split(" ")[0]}\` takes no row key.`, DATA_HELP);
    }
    if (verb.key === "arg") {
      if (keyArg === undefined) throw invalidArgs(`Missing argument <key>: usage \`service data <app> <collection> ${verb.usage}\`.`, DATA_HELP);
      key = keyArg;
    }
    if (verb.key === "arg-or-flag") {
      if (keyArg !== undefined && flagKey !== undefined) throw invalidArgs("Give the row key once: as the argument or with --key, not both.", DATA_HELP, { flag: "--key" });
      if (keyArg === undefined && flagKey === undefined) throw invalidArgs(`Missing the row key: usage \`service data <app> <collection> ${verb.usage}\`.`, DATA_HELP);
      key = keyArg ?? flagKey!;
    }
    if (verb.key !== "none" && key === "") throw invalidArgs("The row key cannot be empty.", DATA_HELP);

    const dataCtx: DataContext = { ...ctx, appArg: app, collection, key, line, open: collectionTarget(ctx, app, collection) };
    return verb.run(dataCtx);
  },
};
