// `service ingest backfill --app <app> --name <hook> --file <path|-> [--chunk <n>]`: POST
// …/ingest-hooks/:name/backfill (WIRE §2.7) with `{ bodies }` in chunks of at most --chunk
// bodies (default 500, the relay's INGEST_BACKFILL_MAX_BODIES) whose request also stays
// within the import's byte budget. The file is a JSON array or NDJSON, each value a whole
// raw provider payload; a line that is not JSON counts as failed and is not sent. The
// relay dedupes as it does live, so running the same file again after an interrupted
// backfill writes each deduplicated body once. Prints { app, hook, total, accepted,
// dropped_duplicate, failed, chunks } (WIRE §6.7); one progress line per chunk on
// stderr, only when stderr is a terminal.
import { stringFlag } from "../../argv.ts";
import { CliError, UpgradeRequiredError, invalidArgs } from "../../errors.ts";
import { readStdin } from "../../input.ts";
import { wholeFlag } from "../credentials/common.ts";
import { readFileArg } from "../data/common.ts";
import { parseImport, planChunks, REQUEST_BYTE_BUDGET } from "../data/import.ts";
import type { Command, CommandContext } from "../types.ts";
import { APP_FLAG, NAME_FLAG, appTarget, hookName, hookPath } from "./common.ts";

const DEFAULT_CHUNK = 500;
const OUTCOMES = ["accepted", "dropped_duplicate", "failed"] as const;
type Tally = Record<(typeof OUTCOMES)[number], number>;

async function readSource(ctx: CommandContext): Promise<string> {
  const file = stringFlag(ctx.flags, "file");
  if (file === undefined) throw invalidArgs(`\`${ctx.command}\` needs --file <path|-> (a JSON array or NDJSON).`, ctx.command, { flag: "--file" });
  if (file !== "-") return readFileArg(file, "file");
  if (ctx.stdin.isTTY) throw invalidArgs("Refusing to read --file - from a terminal; pipe the bodies in.", ctx.command, { flag: "--file" });
  return readStdin(ctx.stdin);
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

export const ingestBackfill: Command = {
  noun: "ingest",
  verb: "backfill",
  summary: "load historic provider payloads through a hook's rule (no signature, no wake, dedupe on)",
  description: "Each body runs through the hook's mapping, validation, quota and dedupe as a live delivery would,\nwithout the rate brakes or signature check, and never wakes the app. A header: dedupeKey cannot resolve here.",
  flags: [
    APP_FLAG, NAME_FLAG,
    { name: "file", kind: "string", value: "<path|->", description: "a JSON array or NDJSON of raw payloads; - reads stdin (required)" },
    { name: "chunk", kind: "string", value: "<n>", description: "bodies per request, 1 to 500 (default 500); large bodies go in smaller chunks" },
  ],
  args: [],
  examples: ["service ingest backfill --app my-app --name github --file issues.ndjson"],
  skillCheck: true,
  async run(ctx) {
    const name = hookName(ctx);
    const chunkSize = wholeFlag(ctx, "chunk", 1, DEFAULT_CHUNK) ?? DEFAULT_CHUNK;
    const items = parseImport(await readSource(ctx), (message) => {
      throw invalidArgs(message, ctx.command, { flag: "--file" });
    });
    const tally: Tally = { accepted: 0, dropped_duplicate: 0, failed: 0 };
    const bodies: unknown[] = [];
    for (const item of items) {
      if ("failure" in item) tally.failed++;
      else bodies.push(item.data);
    }
    const t = await appTarget(ctx);
    const progress = process.stderr.isTTY === true;
    const plan = planChunks(bodies, chunkSize, REQUEST_BYTE_BUDGET, jsonBytes({ bodies: [] }), jsonBytes);
    let chunks = 0;
    let sent = 0;
    for (const chunk of plan) {
      chunks++;
      sent += chunk.length;
      try {
        const answer = await t.relay.object("POST", `${hookPath(t, name)}/backfill`, { auth: t.auth, body: { bodies: chunk } });
        for (const outcome of OUTCOMES) tally[outcome] += typeof answer[outcome] === "number" ? (answer[outcome] as number) : 0;
      } catch (err) {
        // The first chunk failing whole (no such hook, no access) means nothing was sent:
        // that is the command's error. A later chunk's bodies count as failed.
        if (!(err instanceof CliError) || err instanceof UpgradeRequiredError || chunks === 1) throw err;
        tally.failed += chunk.length;
      }
      if (progress) ctx.out.note(`backfill: chunk ${chunks}/${plan.length}, ${sent} of ${bodies.length} bodies sent (${tally.accepted} accepted, ${tally.dropped_duplicate} duplicate, ${tally.failed} failed so far)`);
    }
    ctx.out.json({ app: t.app.id, hook: name, total: items.length, ...tally, chunks });
  },
};
