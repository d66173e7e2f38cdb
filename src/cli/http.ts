// The shared HTTP client for talking to the relay (WIRE §1.1–1.3): sends the agent key
// and `x-service-cli-version`, JSON bodies only when there is a body, and turns every
// failure into a CliError — the relay's error envelope passed through field by field,
// `non_json_response` for bodies that are not JSON, `fetch_error` when the network fails,
// and the 426 upgrade error that main.ts prints as two lines with exit 75.
import { CliError, UpgradeRequiredError } from "./errors.ts";

const MAX_RESPONSE_SNIPPET_LENGTH = 500;
const DEFAULT_TIMEOUT_MS = 60_000;
const REPORT_SENTENCE =
  "The relay failed on its side. Please report it with `service feedback create --type bug --message \"<the command you ran and this error>\"` so it can be fixed.";

export type Auth = { kind: "none" } | { kind: "key"; key: string } | { kind: "bearer"; token: string };

export interface RequestOptions {
  auth?: Auth;
  body?: unknown;
  /** Send `x-service-cli-version` (default true; `agent claim` turns it off, WIRE §1.1). */
  sendVersion?: boolean;
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class RelayClient {
  constructor(readonly baseUrl: string, private readonly version: string | null) {}

  /** One HTTP exchange. Throws only `fetch_error`; the status is the caller's to judge. */
  async raw(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: "application/json" };
    const auth = options.auth ?? { kind: "none" };
    if (auth.kind === "key") headers.authorization = `Bearer ${auth.key}`;
    if (auth.kind === "bearer") headers.authorization = `Bearer ${auth.token}`;
    if (options.sendVersion !== false && this.version) headers["x-service-cli-version"] = this.version;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    const url = `${this.baseUrl}${path}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
      text = await res.text();
    } catch (err) {
      throw fetchError(url, err);
    }
    return { status: res.status, headers: res.headers, text };
  }

  /** A JSON call: the parsed 2xx body (null for 204 or an empty body), or a thrown CliError. */
  async json(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const res = await this.raw(method, path, options);
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
    if (res.status === 204 || res.text.trim() === "") return null;
    return parseJsonBody(res);
  }

  /** A JSON call whose 2xx body must be an object (`invalid_response` otherwise). */
  async object(method: string, path: string, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    const data = await this.json(method, path, options);
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      throw new CliError("invalid_response", `The relay answered ${method} ${path} with ${data === null ? "no body" : "JSON that is not an object"}.`, {
        hint: "Check that --url points at a relay.",
        details: { body: snippet(JSON.stringify(data)) },
      });
    }
    return data as Record<string, unknown>;
  }

  /** A text call (the skill markdown): the raw 2xx body, or a thrown CliError. */
  async text(method: string, path: string, options: RequestOptions = {}): Promise<string> {
    const res = await this.raw(method, path, options);
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res);
    return res.text;
  }
}

export function parseJsonBody(res: RawResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    throw new CliError("non_json_response", `The relay answered with a body that is not JSON (HTTP ${res.status}).`, {
      hint: "Check that --url points at a relay and not at some other web server.",
      details: { status: res.status, body: snippet(res.text) },
    });
  }
}

/** Turns a non-2xx answer into the matching CliError (WIRE §1.3 fallbacks included). */
export function errorFromResponse(res: RawResponse): CliError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    return new CliError("non_json_response", `The relay answered HTTP ${res.status} with a body that is not JSON.`, {
      hint: "Check that --url points at a relay and not at some other web server.",
      details: { status: res.status, body: snippet(res.text) },
      report: res.status >= 500 ? REPORT_SENTENCE : undefined,
    });
  }
  const rawError = typeof parsed === "object" && parsed !== null ? (parsed as { error?: unknown; error_description?: unknown }).error : undefined;
  let fields: Record<string, unknown> = {};
  if (typeof rawError === "object" && rawError !== null && !Array.isArray(rawError)) fields = rawError as Record<string, unknown>;
  else if (typeof rawError === "string") {
    // RFC 8628 string form outside the device poll: keep its code and description.
    fields = { code: rawError, message: (parsed as { error_description?: unknown }).error_description };
  }
  const code = typeof fields.code === "string" && fields.code ? fields.code : "relay_error";
  const message = typeof fields.message === "string" && fields.message ? fields.message : `relay returned ${res.status}`;
  const common = {
    hint: typeof fields.hint === "string" ? fields.hint : undefined,
    retryable: typeof fields.retryable === "boolean" ? fields.retryable : undefined,
    docsUrl: typeof fields.docs_url === "string" ? fields.docs_url : undefined,
    details: fields.details,
    report: res.status >= 500 ? REPORT_SENTENCE : undefined,
  };
  if (res.status === 426 || code === "cli_upgrade_required") {
    const details = (typeof fields.details === "object" && fields.details !== null ? fields.details : {}) as Record<string, unknown>;
    return new UpgradeRequiredError(
      message,
      typeof details.min_version === "string" ? details.min_version : null,
      typeof details.your_version === "string" ? details.your_version : null,
      common,
    );
  }
  return new CliError(code, message, common);
}

function fetchError(url: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const name = (err as Error)?.name;
  const reason = name === "TimeoutError" ? "the request timed out" : cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
  return new CliError("fetch_error", `Could not reach the relay at ${new URL(url).origin}: ${reason}.`, {
    hint: "Check --url, SERVICE_URL or the profile's url, and that the relay is running.",
    details: { url },
  });
}

function snippet(text: string): string {
  return text.length > MAX_RESPONSE_SNIPPET_LENGTH ? text.slice(0, MAX_RESPONSE_SNIPPET_LENGTH) : text;
}
