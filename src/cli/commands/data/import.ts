// `service data <app> <collection> import --file <path|-> [--key-field <f> | --on <f>]
// [--chunk <n>] [--emit-effects]`: bulk write through POST …/batch (WIRE §2.3) in chunks
// of at most --chunk rows (100 by default) whose request body also stays within
// REQUEST_BYTE_BUDGET, so large rows go in smaller chunks and a row larger than the budget
// goes alone. The file is a JSON array or NDJSON (one JSON value per line), each
// value being a row's data. --key-field uses that field's value as the row key, which
// makes each row create-or-skip (an existing row is left unchanged), so a re-import is
// safe. A bad row never stops the import: lines that are not JSON, rows without the key
// field and rows the relay refused are listed under `failures` by their 0-based position
// in the file. Batches are silent (no notify or webhooks) unless --emit-effects.
// Prints { app, collection, total, imported, failed, chunks, silent, failures } (WIRE
// §6.7); one progress line per chunk on stderr, only when stderr is a terminal.
import { boolFlag, stringFlag } from "../../argv.ts";
import { CliError, UpgradeRequiredError } from "../../errors.ts";
import { readStdin } from "../../input.ts";
import { argError, intFlag, readFileArg, type DataContext, type DataVerb } from "./common.ts";

const DEFAULT_CHUNK = 100;
const MAX_CHUNK = 100;
/**
 * The most bytes one batch request body may take, counted as sent (UTF-8 JSON). The CLI
 * cannot know the relay's cap, so it stays under the smallest a relay is known to take:
 * 1 MiB, the default JSON body cap of every route (MAX_JSON_BODY_BYTES; this relay's batch
 * route takes a full batch of maximal rows, several MiB). A row larger than the budget is
 * sent alone, and the relay's answer for it (row_size_exceeded, payload_too_large) is that
 * row's failure.
 */
export const REQUEST_BYTE_BUDGET = 1_000_000;

interface Failure {
  index: number;
  key?: string;
  error: { code: string; message: string; status?: number; details?: unknown };
}

type Item = { index: number; data: unknown } | { index: number; failure: Failure["error"] };

/** The file's rows in order: a JSON array, else NDJSON (blank lines skipped). */
export function parseImport(text: string, onWholeFileError: (message: string) => never): Item[] {
  const body = text.replace(/^\uFEFF/, "");
  if (body.trimStart().startsWith("[")) {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (err) {
      onWholeFileError(`The file starts with "[" but is not a valid JSON array: ${(err as Error).message}`);
    }
    if (!Array.isArray(value)) onWholeFileError("The file is JSON but not an array of rows.");
    return (value as unknown[]).map((data, index) => ({ index, data }));
  }
  const items: Item[] = [];
  const lines = body.split(/\r?\n/);
  lines.forEach((line, lineIndex) => {
    if (!line.trim()) return;
    const index = items.length;
    try {
      items.push({ index, data: JSON.parse(line) });
    } catch (err) {
      items.push({ index, failure: { code: "invalid_json", message: `Line ${lineIndex + 1} is not valid JSON: ${(err as Error).message}`, details: { line: lineIndex + 1 } } });
    }
  });
  return items;
}

/**
 * Splits rows into chunks of at most `maxRows` rows whose request body — `envelopeBytes`
 * (the body with no rows) plus each row's JSON and a comma — stays within `budget` bytes.
 * A row that alone is over the budget gets a chunk of its own.
 */
export function planChunks<T>(rows: T[], maxRows: number, budget: number, envelopeBytes: number, sizeOf: (row: T) => number): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let bytes = envelopeBytes;
  for (const row of rows) {
    const cost = sizeOf(row) + 1;
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + cost > budget)) {
      chunks.push(chunk);
      chunk = [];
      bytes = envelopeBytes;
    }
    chunk.push(row);
    bytes += cost;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

function keyOf(data: unknown, field: string): string | null {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return null;
  const value = (data as Record<string, unknown>)[field];
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

function errorFields(err: CliError): Failure["error"] {
  return { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) };
}

function progressLine(chunk: number, chunks: number, sent: number, sendable: number, imported: number, failed: number): string {
  return `import: chunk ${chunk}/${chunks}, ${Math.min(sent, sendable)} of ${sendable} rows sent (${imported} imported, ${failed} failed so far)`;
}

async function readSource(ctx: DataContext): Promise<string> {
  const file = stringFlag(ctx.flags, "file");
  if (file === undefined) throw argError(`${ctx.line} needs --file <path|-> (NDJSON or a JSON array).`, "--file");
  if (file !== "-") return readFileArg(file, "file");
  if (ctx.stdin.isTTY) throw argError("Refusing to read --file - from a terminal; pipe the rows in.", "--file");
  return readStdin(ctx.stdin);
}

export const dataImport: DataVerb = {
  verb: "import",
  usage: "import --file <path|-> [--key-field <field> | --on <field>] [--chunk <n>] [--emit-effects]",
  summary: "bulk-create rows from NDJSON or a JSON array through the batch endpoint; prints a summary",
  key: "none",
  flags: [
    { name: "file", kind: "string", value: "<path|->", description: "import: NDJSON or a JSON array of row data; - reads stdin" },
    { name: "key-field", kind: "string", value: "<field>", description: "import: use this field's value as the row key; an existing row is left unchanged (create-or-skip)" },
    { name: "on", kind: "string", value: "<field>", description: "upsert, import: a unique field; a row with the same value is updated instead of created" },
    { name: "chunk", kind: "string", value: "<n>", description: "import: rows per batch request, 1 to 100 (default 100); large rows go in smaller chunks, each request under 1 MB" },
    { name: "emit-effects", kind: "boolean", description: "import: fire notifications and webhooks (batches are silent by default)" },
  ],
  async run(ctx) {
    const keyField = stringFlag(ctx.flags, "key-field");
    const on = stringFlag(ctx.flags, "on");
    if (keyField !== undefined && on !== undefined) throw argError("--key-field and --on cannot be combined: the relay refuses per-row keys with on.", "--on");
    const chunkSize = intFlag(ctx, "chunk", 1, MAX_CHUNK) ?? DEFAULT_CHUNK;
    const emitEffects = boolFlag(ctx.flags, "emit-effects");
    const items = parseImport(await readSource(ctx), (message) => {
      throw argError(message, "--file");
    });

    const failures: Failure[] = [];
    const sendable: { index: number; key?: string; data: unknown }[] = [];
    for (const item of items) {
      if ("failure" in item) {
        failures.push({ index: item.index, error: item.failure });
        continue;
      }
      if (keyField === undefined) {
        sendable.push({ index: item.index, data: item.data });
        continue;
      }
      const key = keyOf(item.data, keyField);
      if (key === null) {
        failures.push({ index: item.index, error: { code: "key_field_missing", message: `The row has no string or number "${keyField}" to use as its key (--key-field).` } });
      } else {
        sendable.push({ index: item.index, key, data: item.data });
      }
    }

    const t = await ctx.open();
    const progress = process.stderr.isTTY === true;
    const wire = (r: (typeof sendable)[number]) => (r.key === undefined ? { data: r.data } : { key: r.key, data: r.data });
    const envelope: Record<string, unknown> = { rows: [] };
    if (on !== undefined) envelope.on = on;
    if (emitEffects) envelope.emitEffects = true;
    const plan = planChunks(sendable, chunkSize, REQUEST_BYTE_BUDGET, jsonBytes(envelope), (r) => jsonBytes(wire(r)));
    let imported = 0;
    let chunks = 0;
    let sent = 0;
    for (const chunk of plan) {
      const body = { ...envelope, rows: chunk.map(wire) };
      chunks++;
      sent += chunk.length;
      let answer: Record<string, unknown>;
      try {
        answer = await t.relay.object("POST", `${t.base}/batch`, { auth: t.auth, body });
      } catch (err) {
        // The first chunk failing whole (no access, no such collection, relay down) means
        // nothing was written: that is the command's error. Later, the chunk's rows fail;
        // so do the rows of any chunk the relay finds too large, first or not.
        const tooLarge = err instanceof CliError && err.code === "payload_too_large";
        if (!(err instanceof CliError) || err instanceof UpgradeRequiredError || (chunks === 1 && !tooLarge)) throw err;
        for (const r of chunk) failures.push({ index: r.index, ...(r.key !== undefined ? { key: r.key } : {}), error: errorFields(err) });
        if (progress) ctx.out.note(progressLine(chunks, plan.length, sent, sendable.length, imported, failures.length));
        continue;
      }
      const results = Array.isArray(answer.results) ? (answer.results as Array<Record<string, unknown>>) : null;
      if (!results) throw new CliError("invalid_response", "The relay's batch answer has no results array.", { details: { keys: Object.keys(answer) } });
      const answered = new Set<number>();
      for (const result of results) {
        const position = typeof result.index === "number" ? result.index : -1;
        const row = chunk[position];
        if (!row || answered.has(position)) continue;
        answered.add(position);
        if (result.ok === true) {
          imported++;
          continue;
        }
        const error = (typeof result.error === "object" && result.error !== null ? result.error : {}) as Record<string, unknown>;
        const key = row.key ?? (typeof result.key === "string" ? result.key : undefined);
        failures.push({
          index: row.index,
          ...(key !== undefined ? { key } : {}),
          error: {
            code: typeof error.code === "string" ? error.code : "relay_error",
            message: typeof error.message === "string" ? error.message : "the relay refused this row",
            ...(typeof error.status === "number" ? { status: error.status } : {}),
            ...(error.details !== undefined ? { details: error.details } : {}),
          },
        });
      }
      chunk.forEach((row, position) => {
        if (!answered.has(position)) failures.push({ index: row.index, ...(row.key !== undefined ? { key: row.key } : {}), error: { code: "invalid_response", message: "The relay's batch answer did not mention this row." } });
      });
      if (progress) ctx.out.note(progressLine(chunks, plan.length, sent, sendable.length, imported, failures.length));
    }

    failures.sort((a, b) => a.index - b.index);
    ctx.out.json({
      app: t.app.id,
      collection: ctx.collection,
      total: items.length,
      imported,
      failed: failures.length,
      chunks,
      silent: !emitEffects,
      failures,
    });
  },
};
