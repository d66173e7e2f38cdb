/**
 * zod shapes shared by several route modules: response objects of WIRE §2.1 and the
 * error envelope. Request shapes stay next to their route.
 */
import { z } from "zod";

export const errorEnvelope = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    hint: z.string(),
    retryable: z.boolean(),
    docs_url: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
}).meta({ title: "Error" }); // no `id`: an id becomes a "#/$defs" ref that OpenAPI would resolve against the document root

export const isoTime = z.string().meta({ format: "date-time" });

export const agentName = z.string().trim().min(1).max(64)
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters");

export const ok = z.object({ ok: z.literal(true) });

export function errors(...statuses: number[]): Record<number, { description: string; schema: typeof errorEnvelope }> {
  const text: Record<number, string> = {
    400: "Invalid request", 401: "Missing or bad credential", 403: "Forbidden", 404: "Not found",
    409: "Conflict", 413: "Body too large", 426: "CLI too old", 429: "Rate limited",
  };
  return Object.fromEntries(statuses.map((s) => [s, { description: text[s] ?? "Error", schema: errorEnvelope }]));
}
