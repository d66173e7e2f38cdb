/**
 * Withdrawals: the store's short memory of access taken away. The Worker checks who a
 * caller is in D1 and only then reaches the store, so a change stored in between — a member
 * removed, a key revoked, an app handed to a new owner — can be missed by a request already
 * past its check. Every such change is reported to the app's store (the sockets it ends,
 * `closeWatchers`), which records it here for a minute; a request or socket upgrade that
 * says when its check began is turned away when a withdrawal reaching it was recorded at
 * or after that moment, and comes back to be checked afresh. This is also what makes it
 * safe for the Worker to reuse an agent key's lookup for a few seconds: the store is the
 * one place every write passes, and every withdrawal reaches it.
 */
import type { Principal } from "../../src/permissions";
import type { SocketSelector } from "./contract";

/** How long a withdrawal is remembered: longer than any check may be reused. */
export const WITHDRAWAL_MEMORY_MS = 60_000;

/** Whether `only` reaches this principal (admitted with `previewTokenId`, if one let it in). */
export function reaches(only: SocketSelector, principal: Principal, previewTokenId?: string): boolean {
  if ("humanId" in only) return (principal.kind === "owner" || principal.kind === "member") && principal.humanId === only.humanId;
  if ("agentId" in only) return principal.kind === "agent" && principal.agentId === only.agentId;
  if ("grantLinkId" in only) return principal.kind === "grant" && principal.linkId === only.grantLinkId;
  return previewTokenId !== undefined && previewTokenId === only.previewTokenId;
}

/**
 * The store's log of withdrawals, in `_svc_withdrawals`. It also keeps the newest `at` in
 * memory (read once after a wake), so the common case — nothing withdrawn since a call was
 * checked — costs no query.
 */
export class Withdrawals {
  private newest: number | null | undefined = undefined;

  constructor(private readonly sql: () => SqlStorage) {}

  private newestStored(): number | null {
    if (this.newest === undefined) {
      this.newest = this.sql().exec<{ at: number | null }>("SELECT max(at) AS at FROM _svc_withdrawals").one().at;
    }
    return this.newest;
  }

  /** Records a withdrawal now, forgetting those past the memory window. */
  record(only?: SocketSelector): void {
    const stored = this.newestStored();
    const now = Date.now();
    this.sql().exec("DELETE FROM _svc_withdrawals WHERE at < ?", now - WITHDRAWAL_MEMORY_MS);
    this.sql().exec("INSERT INTO _svc_withdrawals (at, selector) VALUES (?, ?)", now, only ? JSON.stringify(only) : null);
    this.newest = Math.max(stored ?? now, now);
  }

  /**
   * Whether a withdrawal reaching this principal was recorded at or after `checkedAt`. A
   * check older than the memory window is stale whatever it reaches: what happened since
   * may already be forgotten (a slow upload, say), so it is checked again.
   */
  since(checkedAt: number, principal: Principal, previewTokenId?: string): boolean {
    if (checkedAt < Date.now() - WITHDRAWAL_MEMORY_MS) return true;
    const newest = this.newestStored();
    if (newest === null || newest < checkedAt) return false;
    for (const { selector } of this.sql().exec<{ selector: string | null }>("SELECT selector FROM _svc_withdrawals WHERE at >= ?", checkedAt)) {
      if (selector === null || reaches(JSON.parse(selector) as SocketSelector, principal, previewTokenId)) return true;
    }
    return false;
  }

  /** The store's storage was wiped (purge): nothing is remembered any more. */
  forget(): void {
    this.newest = undefined;
  }
}
