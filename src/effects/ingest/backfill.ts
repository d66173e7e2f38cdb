/**
 * Backfill (WIRE §2.7; spec A note 19; CONTRACT §6): the owner loads historic provider
 * bodies through a hook's rule. Each body runs exactly as a live one would (mapping,
 * validation, quota, dedupe on) except that no brake applies, no signature is checked,
 * wake never fires and a `header:` dedupeKey cannot resolve (there are no headers). The
 * answer carries one outcome per body in input order. Because dedupe is on, sending the
 * same bodies again after an interrupted backfill writes each deduplicated body once.
 */
import { RelayError } from "../../errors";
import { config } from "../../config";
import type { AppRow } from "../../db/apps";
import type { JsonValue } from "../../manifest";
import { recordFlow } from "../../account/usage";
import { deliver, type DeliveryStatus } from "./deliver";
import { liveHookByName } from "./hooks";
import { utf8Bytes } from "../../bytes";

export interface BackfillResult {
  total: number;
  accepted: number;
  dropped_duplicate: number;
  failed: number;
  outcomes: DeliveryStatus[];
}

export async function backfill(env: Env, app: AppRow, hookName: string, bodies: JsonValue[]): Promise<BackfillResult> {
  const cap = config(env).limits.INGEST_BACKFILL_MAX_BODIES;
  if (bodies.length > cap) throw new RelayError("invalid_request", `At most ${cap} bodies per backfill call; got ${bodies.length}.`, { field: "bodies", limit: cap });
  const hook = await liveHookByName(env, app.id, hookName);
  const result: BackfillResult = { total: bodies.length, accepted: 0, dropped_duplicate: 0, failed: 0, outcomes: [] };
  const maxBytes = config(env).limits.INGEST_MAX_BODY_BYTES;
  for (const body of bodies) {
    const rawBody = JSON.stringify(body) ?? "null";
    const bytes = utf8Bytes(rawBody);
    const tooLarge = bytes > maxBytes ? { code: "ingest_payload_too_large" as const, message: `The body is ${bytes} bytes, over ${maxBytes}.` } : undefined;
    const outcome = await deliver(env, {
      app: { id: app.id, version: app.currentVersion ?? 1 }, hook, source: "backfill", rawBody: tooLarge ? rawBody.slice(0, 8192) : rawBody, body, headers: null, dedupe: true,
      ...(tooLarge ? { refusal: tooLarge } : {}),
    });
    result[outcome.status] += 1;
    result.outcomes.push(outcome.status);
  }
  if (bodies.length) await recordFlow(env, { humanId: app.ownerHumanId, appId: app.id, metric: "ingest_deliveries", count: bodies.length });
  return result;
}
