/**
 * Cross-site request protection for cookie-authenticated requests: a mutating request
 * must come from the relay's own origin (Origin, or Referer when Origin is absent).
 * Agents never need this: their bearer key cannot be attached by a foreign page.
 */
import { RelayError } from "../../errors";
import { config } from "../../config";
import type { AppContext } from "../types";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function originOf(value: string | undefined): string | null {
  if (!value) return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

export function assertSameOrigin(c: AppContext): void {
  if (SAFE_METHODS.has(c.req.method)) return;
  const expected = config(c.env).apiOrigin;
  const origin = c.req.header("origin");
  const seen = origin !== undefined && origin !== "null" ? originOf(origin) : originOf(c.req.header("referer"));
  if (seen !== expected) {
    throw new RelayError("csrf_origin_mismatch", `Requests with a session cookie must come from ${expected}.`, { expected_origin: expected, origin: seen });
  }
}
