/**
 * Who is calling, as the permission engine sees it. The Worker authenticates a request
 * (agent key, session, grant link, visitor identity, service credential, lease credential)
 * and turns it into ONE of these plain objects; the AppStore hands it to `authorize`
 * together with the live manifest. Nothing here reads a header or a database: a principal
 * is data, so it can cross the Durable Object RPC boundary unchanged.
 *
 * The same object also says how the principal's writes are stamped (`authorOf`) and which
 * identity row-scoped subjects (`creator`, `editor`, relations) compare against
 * (`identityOf`).
 */
import type { AuthorKind, Scalar } from "../manifest";

/** A row stamp: `{ kind, id }` as rows and feed entries carry it (WIRE §2.14). */
export interface Author {
  kind: AuthorKind;
  id: string;
}

/** One condition of the row-query grammar (WIRE §2.3), as grant pins carry it. */
export type CondOp = "eq" | "neq" | "in" | "notIn" | "gt" | "lt" | "gte" | "lte";
export interface Cond {
  field: string;
  op: CondOp;
  value: Scalar | Scalar[];
}

/** A grant link's pin: one row key, or a where list the rows must all satisfy. */
export type GrantPin = { key: string } | { where: Cond[] };

/** The operations a service credential's allowlist can name (spec A Shapes 14). */
export type CredentialOp = "read" | "create" | "update" | "delete";

export interface CredentialGrant {
  collection: string;
  /** May be empty: under `following` that carves the collection out entirely. */
  ops: CredentialOp[];
  /** `own`: row-addressed operations reach only rows this credential wrote last. */
  scope?: "own";
}

export type Principal =
  /** The owning human, signed in (console or app session). */
  | { kind: "owner"; humanId: string }
  /** The owning agent (API key): owner-level, stamped as itself. */
  | { kind: "agent"; agentId: string }
  /** A signed-in member; `roles` are the custom roles assigned to them (undeclared ones are ignored). */
  | { kind: "member"; humanId: string; roles: string[] }
  /**
   * A grant-link holder: anonymous, but carrying one custom role, optionally pinned to rows.
   * `grantId` is the holder's own id (its row stamp); `linkId` the link it came through, so
   * revoking the link can find every holder's open feed socket.
   */
  | { kind: "grant"; grantId: string; linkId: string; role: string; pin: GrantPin | null; ip?: string }
  /** An anonymous visitor with a minted per-app identity (public/link apps, WIRE §5.2). */
  | { kind: "visitor"; visitorId: string; ip?: string }
  /** Nobody in particular: no identity, only an address for the write budget. */
  | { kind: "anonymous"; ip: string }
  /** A service credential minted by the owner: allowlist ∩ owner authority, no role. */
  | { kind: "credential"; credentialId: string; mode: "explicit" | "following"; grants: CredentialGrant[] }
  /** An agent task's lease credential: reads its declared reads, writes its declared writes. */
  | { kind: "lease"; taskId: string; reads: string[]; writes: string[] };

export type PrincipalKind = Principal["kind"];

/** How a principal's writes are stamped on the row (`author`, `creator`, `editor`). */
export function authorOf(principal: Principal): Author {
  switch (principal.kind) {
    case "owner":
      return { kind: "human", id: principal.humanId };
    case "agent":
      return { kind: "agent", id: principal.agentId };
    case "member":
      return { kind: "human", id: principal.humanId };
    case "grant":
      return { kind: "grant", id: principal.grantId };
    case "visitor":
      return { kind: "visitor", id: principal.visitorId };
    case "anonymous":
      // The address is never written into a row: every anonymous write looks the same.
      return { kind: "anon", id: "anon" };
    case "credential":
      return { kind: "service", id: principal.credentialId };
    case "lease":
      // A task's write-back is a machine write (WIRE §5.5 agentTasks).
      return { kind: "service", id: principal.taskId };
  }
}

/** Stamps for writes that never pass through `authorize`: ingest deliveries and seed rows. */
export function machineAuthor(kind: "hook" | "system", id: string): Author {
  return { kind, id };
}

/**
 * The identity row-scoped subjects compare against, or `null` when the principal has
 * none. Only a plain anonymous caller has none: every row it writes is stamped alike, so
 * "the rows you created" means nothing for it (WIRE §7 row 12).
 */
export function identityOf(principal: Principal): Author | null {
  return principal.kind === "anonymous" ? null : authorOf(principal);
}

/** Owner-level principals: the owner, the owning agent, and the owner's delegates (credential, lease). */
export function isOwnerLevel(principal: Principal): boolean {
  return principal.kind === "owner" || principal.kind === "agent" || principal.kind === "credential" || principal.kind === "lease";
}

export function sameAuthor(a: Author | null | undefined, b: Author | null | undefined): boolean {
  return !!a && !!b && a.kind === b.kind && a.id === b.id;
}

/** The owner or the owning agent: who may purge, restore, list deleted rows, quiet a batch's effects and set retention. */
export function isOwnerOrAgent(principal: Principal): boolean {
  return principal.kind === "owner" || principal.kind === "agent";
}
