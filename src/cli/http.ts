// The shared HTTP client for talking to the relay (WIRE §1.1–1.3): sends the agent key
// and `x-service-cli-version`, JSON bodies only when there is a body, and turns every
// failure into a CliError — the relay's error envelope passed through field by field,
// `non_json_response` for bodies that are not JSON, `fetch_error` when the network fails,
// and the 426 upgrade error that main.ts prints as two lines with exit 75.
//
// It speaks HTTP through node:http / node:https rather than fetch: Node 20's fetch loads
// and compiles undici (its parser is WebAssembly) on the first call and holds the process
// open after the last one, which added hundreds of milliseconds to every short command.
import type { IncomingHttpHeaders } from "node:http";
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

/** Response headers by lower-case name (fetch's `Headers` is one too). */
export interface ResponseHeaders {
  get(name: string): string | null;
}

export interface RawResponse {
  status: number;
  headers: ResponseHeaders;
  text: string;
  /** The body as bytes (binary downloads such as `attachment download`). */
  bytes?: Uint8Array;
}

export class RelayClient {
  constructor(readonly baseUrl: string, private readonly version: string | null) {}

  /** One HTTP exchange. Throws only `fetch_error`; the status is the caller's to judge. */
  /** The headers every call sends: accept JSON, the credential, and the CLI version unless turned off. */
  baseHeaders(options: Pick<RequestOptions, "auth" | "sendVersion"> = {}): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    const auth = options.auth ?? { kind: "none" };
    if (auth.kind === "key") headers.authorization = `Bearer ${auth.key}`;
    if (auth.kind === "bearer") headers.authorization = `Bearer ${auth.token}`;
    if (options.sendVersion !== false && this.version) headers["x-service-cli-version"] = this.version;
    return headers;
  }

  async raw(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    const headers = this.baseHeaders(options);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    const url = `${this.baseUrl}${path}`;
    try {
      return await exchange(url, method, headers, body, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    } catch (err) {
      throw fetchError(url, err);
    }
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

/**
 * One request and its whole answer, like fetch with `redirect: "manual"`: any status is an
 * answer; a network failure, or no complete answer within `timeoutMs`, rejects (the
 * timeout as an Error named "TimeoutError", as AbortSignal.timeout would).
 */
async function exchange(url: string, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawResponse> {
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") throw new Error(`unsupported protocol ${target.protocol}`);
  // Loaded on first use: node:https brings TLS, which a plain-http command never needs.
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const payload = body === undefined ? undefined : Buffer.from(body, "utf8");
  if (payload) headers = { ...headers, "content-length": String(payload.length) };
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const req = request(target, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => settle(() => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: headerGetter(res.headers), text: bytes.toString("utf8"), bytes });
      }));
      res.on("error", (err) => settle(() => reject(err)));
      res.on("close", () => settle(() => reject(Object.assign(new Error("the connection closed before the answer was complete"), { code: "ECONNRESET" }))));
    });
    const timer = setTimeout(() => {
      const err = new Error("the request timed out");
      err.name = "TimeoutError";
      settle(() => reject(err));
      req.destroy(err);
    }, timeoutMs);
    req.on("error", (err) => settle(() => reject(err)));
    req.end(payload);
  });
}

function headerGetter(raw: IncomingHttpHeaders): ResponseHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

/** The most telling part of a network failure: an errno code such as ECONNREFUSED, else its message. */
function failureReason(err: unknown): string {
  const e = err as { name?: string; code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (e?.name === "TimeoutError") return "the request timed out";
  if (typeof e?.code === "string") return e.code;
  // Node tries each address of a host name (IPv6 and IPv4 for localhost): all failed.
  if (Array.isArray(e?.errors) && e.errors.length > 0) return failureReason(e.errors[0]);
  if (e?.cause) return failureReason(e.cause);
  return typeof e?.message === "string" && e.message ? e.message : String(err);
}

export function fetchError(url: string, err: unknown): CliError {
  const reason = failureReason(err);
  return new CliError("fetch_error", `Could not reach the relay at ${new URL(url).origin}: ${reason}.`, {
    hint: "Check --url, SERVICE_URL or the profile's url, and that the relay is running.",
    details: { url },
  });
}

function snippet(text: string): string {
  return text.length > MAX_RESPONSE_SNIPPET_LENGTH ? text.slice(0, MAX_RESPONSE_SNIPPET_LENGTH) : text;
}
