// Turns the `<app>` a user typed (an app id or a slug) into the app id every API path
// needs, exactly as WIRE §1.5 says:
//   1. a value that looks like a generated id is tried with GET /v1/apps/:id; an
//      `app_not_found` answer falls through to step 2, any other error is fatal;
//   2. GET /v1/apps?status=all&slug=<value>&limit=1 and take items[0].id;
//   3. no match is a local `app_not_found`.
// An app in the trash answers step 1 with `soft_deleted`: that still proves the id, so
// restore and purge can name a deleted app by id.
import { CliError } from "./errors.ts";
import type { RelayClient } from "./http.ts";

/** What the CLI treats as "looks like a generated app id" (WIRE §1.4). */
export const APP_ID_PATTERN = /^[a-z][a-z0-9]{20,}$/;

/** Longest slug the relay accepts; a longer value cannot be one. */
const MAX_SLUG_LENGTH = 63;

export interface ResolvedApp {
  id: string;
  /** The AppDetail read in step 1 (absent when the app came from the slug lookup or is deleted). */
  detail?: Record<string, unknown>;
  /** The AppSummary found in step 2. */
  summary?: Record<string, unknown>;
}

export async function resolveApp(relay: RelayClient, key: string, value: string): Promise<ResolvedApp> {
  const auth = { kind: "key" as const, key };
  const wanted = value.trim();
  if (APP_ID_PATTERN.test(wanted)) {
    try {
      const detail = await relay.object("GET", `/v1/apps/${encodeURIComponent(wanted)}`, { auth });
      return { id: typeof detail.id === "string" ? detail.id : wanted, detail };
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      if (err.code === "soft_deleted") {
        const details = err.details as { app_id?: unknown } | undefined;
        return { id: typeof details?.app_id === "string" ? details.app_id : wanted };
      }
      if (err.code !== "app_not_found") throw err;
    }
  }
  if (wanted !== "" && wanted.length <= MAX_SLUG_LENGTH) {
    const query = new URLSearchParams({ status: "all", slug: wanted, limit: "1" });
    const page = await relay.object("GET", `/v1/apps?${query}`, { auth });
    const first = Array.isArray(page.items) ? (page.items[0] as Record<string, unknown> | undefined) : undefined;
    if (first && typeof first.id === "string") return { id: first.id, summary: first };
  }
  throw new CliError("app_not_found", `No app with the id or slug ${JSON.stringify(wanted.slice(0, 100))} is visible to you.`, {
    hint: "List your apps with `service apps list --status all`; apps of other owners are never shown.",
  });
}
