/**
 * How a tool reaches the relay's own `/v1` routes: the request is handed to the same Hono
 * app in process (no network, no subrequest), with the caller's own Authorization, so the
 * route's edge validation, auth, permissions, limits and errors are the ones a `/v1`
 * caller meets, by construction. A path no route serves yet (a feature this relay does not
 * have) is answered `not_implemented` before anything is sent.
 */
import type { Hono } from "hono";
import { RelayError } from "../errors";
import { allowedMethods } from "../http/routes";
import type { AppContext, AppEnv } from "../http/types";

export interface RelayFailure {
  code: string;
  status: number;
  message: string;
  hint?: string;
  details?: unknown;
  retryable?: boolean;
}

/** A non-2xx answer from a route, carried up to the tool layer as is. */
export class RelayCallError extends Error {
  constructor(readonly failure: RelayFailure) {
    super(failure.message);
  }
}

export interface RelayRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON; absent sends no body and no content-type. */
  body?: unknown;
  /** `bytes`: a 2xx answer is returned as its raw bytes (attachment downloads). */
  expect?: "json" | "bytes";
}

export interface RelayCaller {
  app: Hono<AppEnv>;
  env: Env;
  executionCtx: AppContext["executionCtx"];
  apiOrigin: string;
  /** The incoming request's headers that the route needs to see: authorization and the client address. */
  forwarded: Headers;
}

/** One path segment, encoded (ids and names never steer the path). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

function urlOf(origin: string, path: string, query: RelayRequest["query"]): string {
  const url = new URL(path, origin);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  return url.toString();
}

/** The route's JSON answer (null for 204 or an empty body; bytes when asked); a non-2xx answer throws RelayCallError. */
export async function callRelay(caller: RelayCaller, request: RelayRequest): Promise<unknown> {
  if (!allowedMethods(request.path).includes(request.method)) {
    throw new RelayError("not_implemented", `This relay does not serve ${request.method} ${request.path.split("?")[0]} yet.`, { method: request.method, path: request.path });
  }
  const headers = new Headers(caller.forwarded);
  if (request.body !== undefined) headers.set("content-type", "application/json");
  const res = await caller.app.fetch(new Request(urlOf(caller.apiOrigin, request.path, request.query), {
    method: request.method, headers, body: request.body === undefined ? undefined : JSON.stringify(request.body),
  }), caller.env, caller.executionCtx);
  const raw = new Uint8Array(await res.arrayBuffer());
  if (res.ok && request.expect === "bytes") return raw;
  const text = new TextDecoder().decode(raw);
  let parsed: unknown = null;
  if (text !== "") {
    try { parsed = JSON.parse(text); } catch { parsed = text; }
  }
  if (res.ok) return parsed;
  const envelope = (parsed as { error?: Partial<RelayFailure> & { code?: string } } | null)?.error;
  throw new RelayCallError({
    code: typeof envelope?.code === "string" ? envelope.code : "relay_error",
    status: res.status,
    message: typeof envelope?.message === "string" ? envelope.message : `relay returned ${res.status}`,
    ...(envelope?.hint !== undefined ? { hint: envelope.hint } : {}),
    ...(envelope?.details !== undefined ? { details: envelope.details } : {}),
    ...(envelope?.retryable !== undefined ? { retryable: envelope.retryable } : {}),
  });
}
