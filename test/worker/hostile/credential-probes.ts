// Tools for the hostile credentials suite (credentials.test.ts): changing one character of a
// token the way an attacker would (a flipped byte in a JWT's signature or payload, a
// re-encoded payload under the old signature, one hex digit of an opaque secret), asserting
// a refusal is the catalogue envelope with the documented status and code and carries none
// of the secrets the suite knows, and recording what the Worker writes to the console so
// the suite can show no secret ever reaches a log line.
import { expect } from "vitest";
import { expectError, type Envelope } from "../helpers";
import type { ErrorCode } from "../../../src/errors";

/** Every secret the suite has seen minted: no refusal body and no log line may contain one. */
export const knownSecrets = new Set<string>();

/** Remembers `secret` (and returns it) so the leak checks look for it. */
export function remember<T extends string>(secret: T): T {
  knownSecrets.add(secret);
  return secret;
}

/** The known secrets `text` contains (the empty list is the only right answer). */
export function leakedIn(text: string): string[] {
  return [...knownSecrets].filter((secret) => secret.length >= 8 && text.includes(secret));
}

const HEX = "0123456789abcdef";
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** `token` with the character at `index` (negative: from the end) replaced by another of the same alphabet. */
export function flipAt(token: string, index: number): string {
  const at = index < 0 ? token.length + index : index;
  const char = token[at];
  const alphabet = HEX.includes(char) && /^([a-z]+_)?[0-9a-f]+$/.test(token) ? HEX : BASE64URL;
  const next = alphabet[(alphabet.indexOf(char) + 1) % alphabet.length];
  return token.slice(0, at) + next + token.slice(at + 1);
}

/** An opaque prefixed secret (`svc_…`, `sess_…`) with one hex digit of its random part changed. */
export function tamperedSecret(token: string): string {
  return flipAt(token, -7);
}

function base64urlJson(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodePart(part: string): Record<string, unknown> {
  return JSON.parse(atob(part.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
}

/** The JWT's claims, read without checking anything. */
export function jwtClaims(token: string): Record<string, unknown> {
  return decodePart(token.split(".")[1]);
}

/** The ways a JWT is tampered with: a flipped signature byte, a flipped payload byte, claims rewritten under the old signature, `alg: none`. */
export function tamperedJwts(token: string, rewrite: Record<string, unknown>): Record<string, string> {
  const [header, payload, signature] = token.split(".");
  const middle = Math.floor(signature.length / 2);
  return {
    "signature byte flipped": `${header}.${payload}.${flipAt(signature, middle)}`,
    "payload byte flipped": `${header}.${flipAt(payload, Math.floor(payload.length / 2))}.${signature}`,
    "claims rewritten, old signature": `${header}.${base64urlJson({ ...decodePart(payload), ...rewrite })}.${signature}`,
    "alg none": `${base64urlJson({ alg: "none", typ: "JWT" })}.${base64urlJson({ ...decodePart(payload), ...rewrite })}.AAAA`,
  };
}

/**
 * Asserts a refusal: exactly the catalogue envelope with this status and code (never a
 * 2xx, never a 5xx), and no known secret in the body or in any header.
 */
export async function refused(res: Response, status: number, code: ErrorCode, label = ""): Promise<Envelope> {
  const text = await res.clone().text();
  expect(leakedIn(text), `${label}: a secret in the body`).toEqual([]);
  expect(leakedIn([...res.headers].map(([name, value]) => `${name}: ${value}`).join("\n")), `${label}: a secret in a header`).toEqual([]);
  return expectError(res, status, code);
}

export type ConsoleLine = { level: string; text: string };

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;

/**
 * Records every console line written while the suite runs (the Worker runs in this isolate,
 * so its logs pass through the same console). Returns the lines and a function that puts
 * the console back.
 */
export function recordConsole(): { lines: ConsoleLine[]; restore: () => void } {
  const lines: ConsoleLine[] = [];
  const originals = LEVELS.map((level) => [level, console[level]] as const);
  for (const [level, original] of originals) {
    console[level] = (...args: unknown[]) => {
      lines.push({ level, text: args.map((arg) => (typeof arg === "string" ? arg : arg instanceof Error ? `${arg.message}\n${arg.stack ?? ""}` : safeJson(arg))).join(" ") });
      original.apply(console, args);
    };
  }
  return { lines, restore: () => { for (const [level, original] of originals) console[level] = original; } };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
