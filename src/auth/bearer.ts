/**
 * Reading `Authorization: Bearer <token>`, the one header every bearer credential rides
 * in (agent keys, service credentials, app sessions, grant-holder credentials). One parse,
 * so every door tells "no header" from "a header that carries no usable token" the same
 * way: the first is a missing credential, the second a presented one that does not hold.
 */

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The bearer token; `undefined` with no header, `null` when the header is not one `Bearer <token>`. */
export function bearerOf(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1] ?? null;
}
