// Typed CLI errors. Every failure travels as a CliError up to the single top-level
// handler in main.ts, which prints it as one JSON line on stderr and picks the exit
// code; nothing below main.ts ever calls process.exit.

export interface CliErrorFields {
  hint?: string;
  retryable?: boolean;
  docsUrl?: string;
  details?: unknown;
  /** Set when the relay answered 5xx: asks the agent to report the failure. */
  report?: string;
  exitCode?: number;
}

export class CliError extends Error {
  readonly code: string;
  readonly hint?: string;
  readonly retryable?: boolean;
  readonly docsUrl?: string;
  readonly details?: unknown;
  readonly report?: string;
  readonly exitCode: number;

  constructor(code: string, message: string, fields: CliErrorFields = {}) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.hint = fields.hint;
    this.retryable = fields.retryable;
    this.docsUrl = fields.docsUrl;
    this.details = fields.details;
    this.report = fields.report;
    this.exitCode = fields.exitCode ?? 1;
  }

  /** The stderr envelope of WIRE §6.6, absent fields left out, in the documented order. */
  toEnvelope(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.hint !== undefined) error.hint = this.hint;
    if (this.retryable !== undefined) error.retryable = this.retryable;
    if (this.docsUrl !== undefined) error.docs_url = this.docsUrl;
    if (this.report !== undefined) error.report = this.report;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/**
 * 426 `cli_upgrade_required`: printed as exactly two plain lines (not JSON) and exit 75,
 * the sysexits "temporary failure" code, so scripts can tell "upgrade me" from errors.
 */
export class UpgradeRequiredError extends CliError {
  readonly minVersion: string | null;
  readonly yourVersion: string | null;

  constructor(message: string, minVersion: string | null, yourVersion: string | null, fields: CliErrorFields = {}) {
    super("cli_upgrade_required", message, { ...fields, exitCode: 75 });
    this.minVersion = minVersion;
    this.yourVersion = yourVersion;
  }
}

/** Argument errors always point at the command's own help. */
export function invalidArgs(message: string, helpCommand: string, details?: unknown): CliError {
  return new CliError("invalid_args", message, { hint: `Run \`${helpCommand} --help\` to see its usage and flags.`, details });
}
