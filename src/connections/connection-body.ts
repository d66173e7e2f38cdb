/**
 * What a connection is made of (WIRE §2.6, spec A item 15): the create body shared by
 * `POST /v1/apps/:id/connections` and the page script's `connections.set`, its zod schema
 * (which also documents it) and the checks that need more than a schema: which fields
 * belong to which kind, the allowed host, and the SSRF rules for the oauth2 URLs (DESIGN
 * §6; development mode admits loopback providers, CONTRACT §3). Every refusal is
 * `connection_invalid` naming the field.
 */
import * as z from "zod";
import { RelayError } from "../errors";
import { refusedTarget } from "../effects/ssrf";
import { normalizeAllowedHost } from "./allowed-host";

/** spec A: lowercase, starting with a letter or digit, then `_` and `-` too, at most 64 characters. */
export const CONNECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const NO_CONTROLS = /^[^\u0000-\u001f\u007f]*$/;
/** RFC 9110 token: a header name, or an auth scheme. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PARAM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Headers the relay sets itself on an outbound request, or that would change how it is
 * carried: a connection may not supply them.
 */
const RESERVED_HEADERS = new Set([
  "host", "content-length", "content-type", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
  "proxy-authorization", "proxy-connection", "cookie", "user-agent",
]);
const RESERVED_HEADER_PREFIX = "x-service-";

/** Parameters the relay sets in the authorization and token requests; `authParams` and `tokenParams` cannot replace them. */
const RESERVED_AUTH_PARAMS = ["response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "scope"];
const RESERVED_TOKEN_PARAMS = ["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "client_id", "client_secret"];

const text = (max: number) => z.string().max(max).regex(NO_CONTROLS, "must not contain control characters");
const optionalText = (max: number) => text(max).transform((s) => (s.trim() === "" ? null : s.trim())).nullable().optional();
const params = z.record(z.string().regex(PARAM_NAME, "must be names of letters, digits, _ . or -, at most 64 characters"), text(1000))
  .refine((record) => Object.keys(record).length <= 20, "must have at most 20 entries");

export const connectionBody = z.strictObject({
  name: z.string().regex(CONNECTION_NAME, "must be lowercase letters, digits, _ or -, starting with a letter or digit, at most 64 characters"),
  kind: z.enum(["static", "oauth2"]).optional().meta({ description: "default static" }),
  allowedHost: z.string().max(260).meta({ description: "The only host the header is sent to: an exact DNS host (api.example.com) or one leftmost wildcard label (*.example.com)" }),
  headerName: z.string().max(64).regex(TOKEN, "must be an HTTP header name").optional().meta({ description: "default Authorization" }),
  headerValue: text(4096).min(1).optional().meta({ description: "static only (required): the header's whole value; never returned" }),
  provider: optionalText(200),
  label: optionalText(200),
  authorizeUrl: z.string().max(2048).optional().meta({ description: "oauth2 only (required): the provider's authorization endpoint" }),
  tokenEndpoint: z.string().max(2048).optional().meta({ description: "oauth2 only (required): the provider's token endpoint" }),
  clientId: text(512).min(1).optional().meta({ description: "oauth2 only (required)" }),
  clientSecret: text(4096).min(1).optional().meta({ description: "oauth2 only (required); never returned" }),
  scopes: optionalText(1000).meta({ description: "oauth2 only: space-delimited scopes to ask for" }),
  authScheme: z.string().max(32).regex(TOKEN, "must be a single word such as Bearer").optional().meta({ description: "oauth2 only: the word before the access token (default Bearer)" }),
  instanceField: z.string().regex(PARAM_NAME, "must be a field name of letters, digits, _ . or -, at most 64 characters").optional()
    .meta({ description: "oauth2 only: the token-response field holding the API base URL (shown as instanceBaseUrl)" }),
  authParams: params.optional().meta({ description: "oauth2 only: extra authorization request parameters" }),
  tokenParams: params.optional().meta({ description: "oauth2 only: extra token request parameters" }),
}).meta({ title: "ConnectionCreate" });

export type ConnectionBody = z.infer<typeof connectionBody>;

const OAUTH2_ONLY = ["authorizeUrl", "tokenEndpoint", "clientId", "clientSecret", "scopes", "authScheme", "instanceField", "authParams", "tokenParams"] as const;

function invalid(field: string, message: string): RelayError {
  return new RelayError("connection_invalid", message, { field });
}

interface Common {
  name: string;
  provider: string | null;
  label: string | null;
  allowedHost: string;
  headerName: string;
}

export interface StaticSettings extends Common {
  kind: "static";
  headerValue: string;
}

export interface OAuthSettings extends Common {
  kind: "oauth2";
  authorizeUrl: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scopes: string | null;
  authScheme: string;
  instanceField: string | null;
  authParams: Record<string, string>;
  tokenParams: Record<string, string>;
}

export type ConnectionSettings = StaticSettings | OAuthSettings;

function required<T>(value: T | undefined, field: string, kind: string): T {
  if (value === undefined) throw invalid(field, `${field} is required for a${kind === "oauth2" ? "n" : ""} ${kind} connection.`);
  return value;
}

/** A provider URL the relay will send the owner to or fetch from: https (loopback http in development), public, no user info. */
function providerUrl(value: string, field: string, development: boolean): string {
  const refusal = refusedTarget(value, { development });
  if (refusal !== null) throw invalid(field, `${field} is refused: ${refusal}.`);
  return new URL(value).href;
}

function extraParams(record: Record<string, string> | undefined, field: string, reserved: readonly string[]): Record<string, string> {
  const taken = Object.keys(record ?? {}).find((name) => reserved.includes(name));
  if (taken !== undefined) throw invalid(`${field}.${taken}`, `${field} may not set ${taken}; the relay sets it.`);
  return record ?? {};
}

/** The settings a parsed body describes, or the `connection_invalid` naming what is wrong. */
export function connectionSettings(body: ConnectionBody, development: boolean): ConnectionSettings {
  const allowedHost = normalizeAllowedHost(body.allowedHost, development);
  if (allowedHost === null) {
    throw invalid("allowedHost", "allowedHost must be an exact public DNS host (api.example.com) or one leftmost wildcard label (*.example.com), with no scheme, port or path; local, internal and metadata names are refused.");
  }
  const headerName = body.headerName ?? "Authorization";
  const lowered = headerName.toLowerCase();
  if (RESERVED_HEADERS.has(lowered) || lowered.startsWith(RESERVED_HEADER_PREFIX)) {
    throw invalid("headerName", `headerName may not be ${headerName}: the relay sets that header itself.`);
  }
  const common: Common = { name: body.name, provider: body.provider ?? null, label: body.label ?? null, allowedHost, headerName };
  const kind = body.kind ?? "static";

  if (kind === "static") {
    const stray = OAUTH2_ONLY.find((field) => body[field] !== undefined && body[field] !== null);
    if (stray !== undefined) throw invalid(stray, `${stray} is only for an oauth2 connection (kind is static).`);
    return { ...common, kind, headerValue: required(body.headerValue, "headerValue", kind) };
  }

  if (body.headerValue !== undefined) throw invalid("headerValue", "headerValue is only for a static connection; an oauth2 connection sends its access token.");
  return {
    ...common,
    kind,
    authorizeUrl: providerUrl(required(body.authorizeUrl, "authorizeUrl", kind), "authorizeUrl", development),
    tokenEndpoint: providerUrl(required(body.tokenEndpoint, "tokenEndpoint", kind), "tokenEndpoint", development),
    clientId: required(body.clientId, "clientId", kind),
    clientSecret: required(body.clientSecret, "clientSecret", kind),
    scopes: body.scopes ?? null,
    authScheme: body.authScheme ?? "Bearer",
    instanceField: body.instanceField ?? null,
    authParams: extraParams(body.authParams, "authParams", RESERVED_AUTH_PARAMS),
    tokenParams: extraParams(body.tokenParams, "tokenParams", RESERVED_TOKEN_PARAMS),
  };
}
