/**
 * Share tokens of link-visibility apps. The token rides in the share URL's `#k=`
 * fragment (never sent in a Referer or logged by servers); the relay keeps only its
 * sha256, so rotating it makes every old URL stop working at once.
 */
import { randomHex, sha256Hex, constantTimeEqual } from "../auth/tokens";

export async function mintShareToken(): Promise<{ token: string; hash: string }> {
  const token = randomHex(16);
  return { token, hash: await sha256Hex(token) };
}

export async function shareTokenMatches(token: string, storedHash: string | null): Promise<boolean> {
  if (!storedHash || !/^[0-9a-f]{32}$/.test(token)) return false;
  return constantTimeEqual(await sha256Hex(token), storedHash);
}
