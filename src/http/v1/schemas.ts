/**
 * zod shapes shared by several route modules: response objects of WIRE §2.1 and the
 * error envelope. Request shapes stay next to their route.
 */
import * as z from "zod";

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

/** The 429 of the routes that mail other people (adding members, offering a transfer). */
export const inviteLimited = {
  429: {
    description: "rate_limited: too many such requests from this address (RATE_LIMIT_INVITE per window), or the owner's invitation, notice and transfer mail for the UTC day (INVITE_MAILS_PER_OWNER_DAY) is spent; nothing was stored or sent; retry after Retry-After seconds",
    schema: errorEnvelope,
  },
};

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

/** Fields of a response whose action turned an unrestricted app back to its declared hosts (src/apps/unrestricted.ts). */
export const unrestrictedRevocation = { unrestricted_revoked: z.literal(true).optional(), unrestricted_notice: z.string().optional() };
