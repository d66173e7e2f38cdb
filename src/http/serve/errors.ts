/**
 * How failures look on an app origin: `/_svc/*` is an API for the page, so it answers
 * the catalogue's JSON envelope through the same renderer as the API origin; every other
 * path is something a person opens, so it answers a plain page (pages.ts). A refusal
 * about the app itself (unknown, suspended, not configured) maps onto a catalogue code.
 */
import { HTTPException } from "hono/http-exception";
import { RelayError, catalogue } from "../../errors";
import { withoutBoundValues } from "../../db/query-errors";
import { renderError } from "../app";
import type { AppContext } from "../types";
import { ServeRefusal, type ServeContext } from "./context";
import { plainPage, refusalPage } from "./pages";

export function isSvcPath(url: string): boolean {
  return new URL(url).pathname.startsWith("/_svc/");
}

/** The API's envelope renderer; the serve context carries the same bindings. */
export function envelope(c: ServeContext, err: RelayError): Response {
  return renderError(c as unknown as AppContext, err);
}

function refusalError(refusal: ServeRefusal): RelayError {
  switch (refusal.reason) {
    case "not_found":
      return new RelayError("app_not_found", refusal.message);
    case "suspended":
      return new RelayError("forbidden", refusal.message, { reason: "suspended" });
    case "unconfigured":
      return new RelayError("auth_provider_unavailable", refusal.message, { reason: "app_session_secret_missing" });
    case "unavailable":
      return new RelayError("internal_error", refusal.message);
  }
}

function toRelayError(err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  if (err instanceof HTTPException && err.status >= 400 && err.status < 500) {
    return new RelayError(err.status === 413 ? "payload_too_large" : "invalid_request", err.message || undefined);
  }
  console.error("app origin: unhandled error", withoutBoundValues(err));
  return new RelayError("internal_error");
}

const titles: Record<number, string> = { 400: "Bad request", 401: "Sign-in needed", 403: "Refused", 404: "Not found", 405: "Method not allowed", 413: "Too large" };
/** Codes whose page needs its own title: a spent or revoked file link is not a sign-in problem. */
const titlesByCode: Partial<Record<string, string>> = { attachment_token_invalid: "Link no longer works" };

export function renderServeError(c: ServeContext, err: unknown): Response {
  const svc = isSvcPath(c.req.url);
  if (err instanceof ServeRefusal) return svc ? envelope(c, refusalError(err)) : refusalPage(err);
  const relayError = toRelayError(err);
  if (svc) return envelope(c, relayError);
  const message = relayError.code === "internal_error" ? catalogue.internal_error.meaning : relayError.message;
  const title = titlesByCode[relayError.code] ?? titles[relayError.status] ?? "Something went wrong";
  return plainPage(relayError.status, title, message, relayError.headers);
}
