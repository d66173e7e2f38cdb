/**
 * Taste notes (WIRE §2.11): one freeform markdown note per agent about the UI its human
 * likes, replaced whole and read back with its size. The checks live here, not in the
 * route, so the rules (not blank, at most MAX_TASTE_BYTES of UTF-8) are one function.
 */
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { tasteNotes } from "../db/taste-schema";
import { RelayError } from "../errors";
import { nowIso } from "../auth/tokens";
import { utf8Bytes } from "../bytes";

export interface TasteView {
  taste: string | null;
  updated_at: string | null;
  bytes: number;
}

const NONE: TasteView = { taste: null, updated_at: null, bytes: 0 };

/** The notes to store, or the catalogue refusal: blank text, or more than `maxBytes` of UTF-8. */
export function checkedTaste(text: string, maxBytes: number): { notes: string; bytes: number } {
  if (text.trim() === "") {
    throw new RelayError("invalid_request", "taste must not be empty or only whitespace; use DELETE /v1/taste to clear it.", { field: "taste" });
  }
  const bytes = utf8Bytes(text);
  if (bytes > maxBytes) {
    throw new RelayError("payload_too_large", `taste is ${bytes} bytes of UTF-8; the cap is ${maxBytes}.`, { field: "taste", limit: maxBytes, bytes });
  }
  return { notes: text, bytes };
}

export async function readTaste(env: Env, agentId: string): Promise<TasteView> {
  const row = (await db(env).select().from(tasteNotes).where(eq(tasteNotes.agentId, agentId)).limit(1))[0];
  return row ? { taste: row.notes, updated_at: row.updatedAt, bytes: row.bytes } : NONE;
}

export async function replaceTaste(env: Env, agentId: string, text: string, maxBytes: number): Promise<TasteView> {
  const { notes, bytes } = checkedTaste(text, maxBytes);
  const updatedAt = nowIso();
  await db(env).insert(tasteNotes).values({ agentId, notes, bytes, updatedAt })
    .onConflictDoUpdate({ target: tasteNotes.agentId, set: { notes, bytes, updatedAt } });
  return { taste: notes, updated_at: updatedAt, bytes };
}

export async function clearTaste(env: Env, agentId: string): Promise<void> {
  await db(env).delete(tasteNotes).where(eq(tasteNotes.agentId, agentId));
}
