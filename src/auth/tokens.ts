/**
 * Secrets the relay hands out: a kind prefix (so a leaked string says what it is), at
 * least 128 random bits, and only the sha256 ever stored. Lookups go by hash; the final
 * comparison is constant-time so a near-miss takes as long as a wild guess.
 */

export const SECRET_KINDS = {
  agentKey: "svc_",
  claimCode: "cc_",
  session: "sess_",
  magicLink: "ml_",
  deviceCode: "dc_",
  /** A service credential: a bearer for one app's collection endpoints (allowlist ∩ owner authority). */
  serviceCredential: "svcs_",
  /** A grant link's token, carried in the `#g=` fragment of its grant_url. */
  grantLink: "gr_",
  /** The per-holder credential a browser gets by exchanging a grant link once. */
  grantHolder: "grh_",
  /** An agent task's lease credential: its rule's reads and writes on one app, until the lease ends. */
  leaseCredential: "svcc_",
} as const;

/** Whether `value` has the exact shape `mintSecret(kind)` produces (prefix + 32 lowercase hex). */
export function isSecretOf(kind: keyof typeof SECRET_KINDS, value: string): boolean {
  const prefix = SECRET_KINDS[kind];
  return value.length === prefix.length + 32 && value.startsWith(prefix) && /^[0-9a-f]{32}$/.test(value.slice(prefix.length));
}

export function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return [...buf].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh secret of the given kind with 128 random bits (agent keys: `svc_` + 32 hex). */
export function mintSecret(kind: keyof typeof SECRET_KINDS): string {
  return SECRET_KINDS[kind] + randomHex(16);
}

/** Display prefix of an agent key: its first 10 characters (CONTRACT §0). */
export function keyPrefix(key: string): string {
  return key.slice(0, 10);
}

export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  if (left.byteLength !== right.byteLength) {
    // Compare against itself so the time spent does not reveal the length mismatch early.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}

/** Sortable, unguessable identifier: base36 time + random, lowercase alphanumeric. */
export function newId(prefix = ""): string {
  const time = Date.now().toString(36).padStart(9, "0");
  const rand = [...crypto.getRandomValues(new Uint8Array(10))].map((b) => (b % 36).toString(36)).join("");
  return `${prefix}${prefix ? "" : "a"}${time}${rand}`;
}

const LAST_USE_EVERY_MS = 60_000;

/** A bearer secret's use is recorded at most once a minute: whether one last used at `lastUsedAt` is due again. */
export function lastUseDue(lastUsedAt: string | null): boolean {
  return !lastUsedAt || Date.now() - Date.parse(lastUsedAt) > LAST_USE_EVERY_MS;
}

export function nowIso(): string {
  return new Date().toISOString();
}

export function isoIn(seconds: number): string {
  return new Date(Date.now() + seconds * 1000).toISOString();
}
