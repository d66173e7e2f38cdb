/**
 * `POST /__dev/cron` (CONTRACT §3): runs every scheduled sweep now, in development mode,
 * and answers `{ ran: [names] }` once they are done, so a test or a person need not wait
 * for the cron trigger. `{ "now": "<ISO-8601>" }` runs them as if at that instant.
 */
import type { Hono } from "hono";
import { RelayError } from "../../errors";
import { runSweeps } from "../../sweeps";
import { readJsonBody } from "../body";
import type { AppContext, AppEnv } from "../types";
import { requireDevelopment } from "./development-only";

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether the calendar date the instant names exists (Date.parse rolls 02-30 over to March). */
function realDate(iso: string): boolean {
  const [year, month, day] = iso.slice(0, 10).split("-").map(Number);
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The instant to sweep at: the body's `now`, else the clock. */
async function sweepInstant(c: AppContext): Promise<number> {
  const body = await readJsonBody(c, true);
  if (body === undefined) return Date.now();
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new RelayError("invalid_request", "The body must be a JSON object: { \"now\"?: \"<ISO-8601>\" }.", { field: "body" });
  }
  const unknown = Object.keys(body).filter((name) => name !== "now");
  if (unknown.length > 0) throw new RelayError("invalid_request", `Unknown field ${unknown[0]}; the only field is now.`, { field: unknown[0] });
  const now = (body as { now?: unknown }).now;
  if (now === undefined) return Date.now();
  const instant = typeof now === "string" && ISO_INSTANT.test(now) && realDate(now) ? Date.parse(now) : Number.NaN;
  if (Number.isNaN(instant)) {
    throw new RelayError("invalid_request", "now must be an ISO-8601 instant with a time zone, like 2026-11-27T08:00:00Z.", { field: "now" });
  }
  return instant;
}

export function devCronRoutes(app: Hono<AppEnv>): void {
  app.post("/__dev/cron", async (c) => {
    requireDevelopment(c);
    const ran = await runSweeps(c.env, await sweepInstant(c));
    return c.json({ ran });
  });
}
