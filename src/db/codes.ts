/**
 * One-time codes that bind an agent to a human: claim codes (`cc_`, minted by a human,
 * redeemed by an agent) and RFC 8628 device codes (started by an agent, approved by a
 * human, consumed by the one poll that receives the key).
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { db } from "./client";
import { claimCodes, deviceCodes } from "./schema";
import { mintSecret, nowIso, sha256Hex } from "../auth/tokens";

type Env = { DB: D1Database };

export const CLAIM_CODE_TTL_SECONDS = 15 * 60;
export const DEVICE_CODE_TTL_SECONDS = 15 * 60;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

export async function mintClaimCode(env: Env, humanId: string): Promise<{ code: string; expiresAt: string }> {
  const code = mintSecret("claimCode");
  const codeHash = await sha256Hex(code);
  const { createdAt, expiresAt } = lifetime(CLAIM_CODE_TTL_SECONDS);
  await db(env).insert(claimCodes).values({ codeHash, humanId, createdAt, expiresAt });
  return { code, expiresAt };
}

export type ClaimCodeRow = typeof claimCodes.$inferSelect;

/** A live (unused, unexpired) claim code, or undefined. */
export async function findLiveClaimCode(env: Env, code: string): Promise<ClaimCodeRow | undefined> {
  return (await db(env).select().from(claimCodes)
    .where(and(eq(claimCodes.codeHash, await sha256Hex(code)), isNull(claimCodes.usedAt), gt(claimCodes.expiresAt, nowIso())))
    .limit(1))[0];
}

/** Marks the code used; false when another request spent it first. */
export async function spendClaimCode(env: Env, codeHash: string, agentId: string): Promise<boolean> {
  const rows = await db(env).update(claimCodes).set({ usedAt: nowIso(), usedByAgentId: agentId })
    .where(and(eq(claimCodes.codeHash, codeHash), isNull(claimCodes.usedAt))).returning({ h: claimCodes.codeHash });
  return rows.length === 1;
}

/** Undoes spendClaimCode when the agent could not be bound after all (a concurrent claim won). */
export async function releaseClaimCode(env: Env, codeHash: string, agentId: string): Promise<void> {
  await db(env).update(claimCodes).set({ usedAt: null, usedByAgentId: null })
    .where(and(eq(claimCodes.codeHash, codeHash), eq(claimCodes.usedByAgentId, agentId)));
}

const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"; // no vowels: no accidental words; no 0/O, 1/I

function userCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const letters = [...bytes].map((b) => USER_CODE_ALPHABET[b % USER_CODE_ALPHABET.length]).join("");
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** Accepts `abcd efgh`, `ABCDEFGH` and `ABCD-EFGH` alike. */
export function normaliseUserCode(input: string): string {
  const letters = input.toUpperCase().replace(/[^A-Z]/g, "");
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : input.trim().toUpperCase();
}

/** A code's creation and expiry from one reading of the clock, so its lifetime is exactly `seconds`. */
function lifetime(seconds: number): { createdAt: string; expiresAt: string } {
  const created = Date.now();
  return { createdAt: new Date(created).toISOString(), expiresAt: new Date(created + seconds * 1000).toISOString() };
}

export type DeviceCodeRow = typeof deviceCodes.$inferSelect;

export async function startDeviceFlow(env: Env, name: string): Promise<{ deviceCode: string; userCode: string; expiresIn: number; interval: number }> {
  const deviceCode = mintSecret("deviceCode");
  for (let attempt = 0; ; attempt++) {
    const code = userCode();
    const deviceCodeHash = await sha256Hex(deviceCode);
    const inserted = await db(env).insert(deviceCodes).values({
      deviceCodeHash, userCode: code, name, status: "pending", intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS, ...lifetime(DEVICE_CODE_TTL_SECONDS),
    }).onConflictDoNothing().returning({ u: deviceCodes.userCode });
    if (inserted.length === 1) return { deviceCode, userCode: code, expiresIn: DEVICE_CODE_TTL_SECONDS, interval: DEVICE_POLL_INTERVAL_SECONDS };
    if (attempt >= 4) throw new Error("could not allocate a unique user code");
  }
}

export async function findDeviceCodeByUserCode(env: Env, code: string): Promise<DeviceCodeRow | undefined> {
  return (await db(env).select().from(deviceCodes).where(eq(deviceCodes.userCode, normaliseUserCode(code))).limit(1))[0];
}

export async function findDeviceCode(env: Env, deviceCode: string): Promise<DeviceCodeRow | undefined> {
  return (await db(env).select().from(deviceCodes).where(eq(deviceCodes.deviceCodeHash, await sha256Hex(deviceCode))).limit(1))[0];
}

/** Approve or deny a pending, unexpired code; false when it is no longer pending. */
export async function decideDeviceCode(env: Env, userCodeValue: string, humanId: string, approve: boolean): Promise<boolean> {
  const rows = await db(env).update(deviceCodes).set({ status: approve ? "approved" : "denied", humanId })
    .where(and(eq(deviceCodes.userCode, normaliseUserCode(userCodeValue)), eq(deviceCodes.status, "pending"), gt(deviceCodes.expiresAt, nowIso())))
    .returning({ u: deviceCodes.userCode });
  return rows.length === 1;
}

export async function recordDevicePoll(env: Env, hash: string, at: number, intervalSeconds: number): Promise<void> {
  await db(env).update(deviceCodes).set({ lastPolledAt: at, intervalSeconds }).where(eq(deviceCodes.deviceCodeHash, hash));
}

/** Moves an approved code to consumed; only the caller that wins this gets the key. */
export async function consumeDeviceCode(env: Env, hash: string, agentId: string): Promise<boolean> {
  const rows = await db(env).update(deviceCodes).set({ status: "consumed", agentId })
    .where(and(eq(deviceCodes.deviceCodeHash, hash), eq(deviceCodes.status, "approved"))).returning({ u: deviceCodes.userCode });
  return rows.length === 1;
}
