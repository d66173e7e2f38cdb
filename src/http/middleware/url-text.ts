/**
 * Request paths and query strings decoded to text the relay could not keep are refused
 * before any route reads them (see ../text-safety.ts): percent-escapes that are not UTF-8
 * (the router would otherwise pass them on undecoded) and an escaped NUL (%00).
 */
import type { MiddlewareHandler } from "hono";
import { unsafeTextError, unsafeTextProblem } from "../text-safety";
import type { AppEnv } from "../types";

/** The decoded text of one path segment or query part, or the problem with it. */
function decodedProblem(raw: string): string | null {
  if (!raw.includes("%")) return raw.includes("\u0000") ? "a NUL character" : null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return "percent-escapes that are not UTF-8";
  }
  return unsafeTextProblem(decoded);
}

export const refuseUnsafeUrlText: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = new URL(c.req.url);
  for (const segment of url.pathname.split("/")) {
    const problem = decodedProblem(segment);
    if (problem) throw unsafeTextError("path", problem);
  }
  for (const part of url.search.slice(1).split("&")) {
    if (part === "") continue;
    const problem = decodedProblem(part);
    if (problem) throw unsafeTextError("query", problem);
  }
  await next();
};
