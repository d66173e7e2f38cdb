// The one place that writes to stdout and stderr, so every command follows WIRE §6.6:
// results as 2-space pretty JSON on stdout, errors as ONE compact JSON line on stderr,
// warnings as `warning: <text>`, and human progress lines (device-flow instructions) on
// stderr where they never pollute the JSON a script parses.
import { CliError, UpgradeRequiredError } from "./errors.ts";
import { upgradeLines } from "./upgrade.ts";

export interface Output {
  /** A command's result: pretty JSON on stdout. */
  json(value: unknown): void;
  /** Raw text on stdout (skill markdown, `--plain`, help). A newline is added if missing. */
  text(value: string): void;
  /** `warning: <text>` on stderr. */
  warn(text: string): void;
  /** A plain progress or instruction line on stderr. */
  note(text: string): void;
  /** The error envelope (or the two upgrade lines) on stderr. */
  error(err: CliError): void;
}

export interface Streams {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
}

export function createOutput(streams: Streams): Output {
  const line = (s: string) => (s.endsWith("\n") ? s : `${s}\n`);
  return {
    json: (value) => streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    text: (value) => streams.stdout.write(line(value)),
    warn: (text) => streams.stderr.write(`warning: ${text}\n`),
    note: (text) => streams.stderr.write(line(text)),
    error: (err) => {
      if (err instanceof UpgradeRequiredError) {
        streams.stderr.write(upgradeLines(err.minVersion, err.yourVersion).join("\n") + "\n");
        return;
      }
      streams.stderr.write(`${JSON.stringify(err.toEnvelope())}\n`);
    },
  };
}
