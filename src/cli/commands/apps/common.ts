// What the `apps` verbs share: the key and client for the relay, `<app>` resolved to an
// id (WIRE §1.5), the app's API path, and the local checks of list flags.
import { stringFlag } from "../../argv.ts";
import { requireKey } from "../../context.ts";
import { invalidArgs } from "../../errors.ts";
import type { Auth, RelayClient } from "../../http.ts";
import { resolveApp, type ResolvedApp } from "../../resolve-app.ts";
import type { CommandContext } from "../types.ts";

export const VISIBILITIES = ["private", "link", "public"];
/** The relay's list filters (CONTRACT §6: spec C's `deleted` plus the wire's `suspended`). */
export const STATUSES = ["active", "dormant", "archived", "suspended", "deleted", "all"];

export interface Session {
  relay: RelayClient;
  key: string;
  auth: Auth;
}

export function session(ctx: CommandContext): Session {
  const resolved = ctx.resolve();
  const key = requireKey(resolved);
  return { relay: ctx.relay(resolved.url), key, auth: { kind: "key", key } };
}

export interface Target extends Session {
  app: ResolvedApp;
  /** `/v1/apps/<id>`. */
  path: string;
}

/** The session plus the `<app>` argument resolved to an id. */
export async function target(ctx: CommandContext, value: string): Promise<Target> {
  const s = session(ctx);
  const app = await resolveApp(s.relay, s.key, value);
  return { ...s, app, path: `/v1/apps/${encodeURIComponent(app.id)}` };
}

export function oneOf(ctx: CommandContext, flag: string, allowed: string[]): string | undefined {
  const value = stringFlag(ctx.flags, flag);
  if (value !== undefined && !allowed.includes(value)) {
    throw invalidArgs(`--${flag} must be one of ${allowed.join(", ")}; got ${JSON.stringify(value)}.`, ctx.command, { flag: `--${flag}` });
  }
  return value;
}

/** --limit as a positive integer (the relay enforces its own maximum). */
export function limitFlag(ctx: CommandContext): string | undefined {
  const value = stringFlag(ctx.flags, "limit");
  if (value !== undefined && !/^[1-9][0-9]*$/.test(value)) {
    throw invalidArgs(`--limit must be a positive whole number; got ${JSON.stringify(value)}.`, ctx.command, { flag: "--limit" });
  }
  return value;
}

/** A query string from the defined entries, with its leading `?` (or "" when empty). */
export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

export const LIST_FLAGS = [
  { name: "limit", kind: "string" as const, value: "<n>", description: "at most n apps per page (relay default 50, max 200)" },
  { name: "cursor", kind: "string" as const, value: "<cursor>", description: "next_cursor from the previous page" },
];

export const APP_ARG = { name: "app", required: true, description: "the app's id or slug" };
