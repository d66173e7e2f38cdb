/**
 * The route registry. Every `/v1` route is declared once with `defineRoute`: its zod
 * schemas validate the request at the edge AND generate `/v1/openapi.json`, so the
 * documentation cannot drift from what the relay accepts. The registry also answers
 * 405 with `Allow` for a known path under the wrong verb.
 */
import type { Hono, MiddlewareHandler } from "hono";
import * as z from "zod";
import type { AppContext, AppEnv } from "./types";
import { readJsonBody } from "./body";
import { allowAgentLookupReuse, requireAgent, requireHuman, requireOwnerActor, requireRowActor } from "./middleware/auth";
import { requireMemberReader } from "./middleware/member-directory";
import { rateLimit } from "./middleware/rate-limit";
import { config, type Config } from "../config";
import type { ErrorCode } from "../errors";
import { parseWith } from "./plain-issues";

/** Console forms parse their fields with the same translator as /v1 (src/http/plain-issues.ts). */
export { parseWith };

export type Method = "get" | "post" | "put" | "patch" | "delete";
/**
 * `owner`: an agent key or the owner's session (spec A's AKO). `rows`: the same, or a
 * service credential (`svcs_…`) — only the collection endpoints use it. `members`: the
 * same as `owner`, or a credential minted with `members: true` — only the member list
 * uses it. A credential stays refused (401) everywhere else, management of credentials,
 * grants and members included.
 */
export type AuthKind = "none" | "agent" | "human" | "owner" | "rows" | "members" | "registration";

export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  auth: AuthKind;
  body?: B;
  /** true: an empty body is read as `{}`. */
  bodyOptional?: boolean;
  /** The catalogue code a body the schema refuses is answered with (default `invalid_request`), e.g. `connection_invalid`. */
  bodyRefusal?: ErrorCode;
  query?: Q;
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** HTML pages and other non-API routes stay out of the OpenAPI document. */
  hidden?: boolean;
  /** A larger body cap than MAX_JSON_BODY_BYTES for this route (deploys carry documents and assets). */
  maxBodyBytes?: (cfg: Config) => number;
  /** Per-IP limiter bucket applied before anything else. */
  rateLimit?: keyof Omit<Config["rateLimit"], "windowSeconds">;
  /** Extra admission check (after the limiter and auth, before the body is read). */
  guard?: MiddlewareHandler<AppEnv>;
}

export type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

export interface RegisteredRoute {
  spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>;
  pattern: RegExp;
}

const registered: RegisteredRoute[] = [];

export function registeredRoutes(): readonly RegisteredRoute[] {
  return registered;
}

/** Matches exactly what Hono routes (strict: a trailing slash is another path). */
function pathPattern(path: string): RegExp {
  const source = path.replace(/[.+*?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+");
  return new RegExp(`^${source}$`);
}

export function defineRoute<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  app: Hono<AppEnv>,
  spec: RouteSpec<B, Q>,
  handler: (c: AppContext, input: { body: Infer<B>; query: Infer<Q> }) => Response | Promise<Response>,
): void {
  registered.push({ spec: spec as RegisteredRoute["spec"], pattern: pathPattern(spec.path) });
  const guards: MiddlewareHandler<AppEnv>[] = [
    ...(spec.rateLimit ? [rateLimit(spec.rateLimit)] : []),
    ...(spec.auth === "agent" ? [requireAgent] : spec.auth === "human" ? [requireHuman] : spec.auth === "owner" ? [requireOwnerActor]
      : spec.auth === "rows" ? [allowAgentLookupReuse, requireRowActor] : spec.auth === "members" ? [requireMemberReader] : []),
    ...(spec.guard ? [spec.guard] : []),
  ];
  const handle: MiddlewareHandler<AppEnv> = async (c) => {
    const query = spec.query ? parseWith(spec.query, Object.fromEntries(new URL(c.req.url).searchParams), "query") : undefined;
    let body: unknown;
    if (spec.body) {
      const raw = await readJsonBody(c, spec.bodyOptional ?? false, spec.maxBodyBytes?.(config(c.env)));
      // Only an absent optional body reads as {}; a literal `null` is a wrong type.
      body = parseWith(spec.body, raw === undefined ? {} : raw, "body", [], spec.bodyRefusal);
    }
    return handler(c as AppContext, { body: body as Infer<B>, query: query as Infer<Q> });
  };
  app.on([spec.method.toUpperCase()], [spec.path], ...guards, handle);
}

/**
 * Records a route that is not a JSON API route (console pages, form posts) so it still
 * takes part in the 405 answer, without appearing in the OpenAPI document.
 */
export function notePageRoute(method: Method, path: string): void {
  registered.push({
    spec: { method, path, summary: "", tag: "console", auth: "none", responses: {}, hidden: true },
    pattern: pathPattern(path),
  });
}

/** Methods registered for a path, for the 405 answer; empty when the path is unknown. */
export function allowedMethods(path: string): string[] {
  const methods = new Set<string>();
  for (const route of registered) if (route.pattern.test(path)) methods.add(route.spec.method.toUpperCase());
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods];
}
