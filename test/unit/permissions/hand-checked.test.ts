// Expectations worked out by hand from the sources, one cell at a time, for a
// representative subset of the matrix. Each row is checked against the engine AND against
// the matrix's oracle, so the generator cannot be wrong in the same way as the engine
// without one of these rows failing.
import { describe, expect, it } from "vitest";
import type { PrincipalName, Variant } from "./fixtures";
import { expected, type Verb } from "./oracle";
import { run } from "./runner";

type Row = [subject: string, verb: Verb, principal: PrincipalName, row: Variant, outcome: string, why: string];

const HAND: Row[] = [
  ["owner", "list", "owner", "foreign", "ok:seen", "the owner subject reaches every row"],
  ["owner", "list", "member", "mine", "collection_read_forbidden", "a member is not the owner"],
  ["owner", "get", "member", "mine", "row_not_found", "an unreadable row is hidden, even one you wrote"],
  ["member", "get", "owner", "foreign", "ok", "owner implies member"],
  ["member", "get", "grantStaff", "mine", "row_not_found", "a grant holder is not a member"],
  ["member", "list", "visitor", "mine", "collection_read_forbidden", "a visitor is not a member"],
  ["anyone", "get", "anonymous", "foreign", "ok", "anyone includes the anonymous"],
  ["anyone", "create", "anonymous", "foreign", "ok", "write: anyone"],
  ["staff", "get", "memberLead", "foreign", "ok", "lead includes staff"],
  ["lead", "get", "memberStaff", "foreign", "row_not_found", "includes run one way only"],
  ["lead", "list", "grantStaff", "foreign", "collection_read_forbidden", "staff does not imply lead"],
  ["staff", "get", "owner", "foreign", "row_not_found", "the owner holds no custom role: no implicit grants"],
  ["staff", "get", "grantLead", "foreign", "ok", "a grant for lead carries staff too"],
  ["staff:own", "list", "memberStaff", "foreign", "ok:unseen", "own rows only"],
  ["staff:own", "list", "memberStaff", "edited", "ok:seen", "own = wrote it last"],
  ["staff:own", "get", "memberStaff", "created", "row_not_found", "created it, but someone else wrote last"],
  ["staff:creator", "get", "memberStaff", "created", "ok", "created it"],
  ["staff:creator", "create", "memberStaff", "foreign", "ok", "role:creator in write lets the role create"],
  ["staff:creator", "create", "member", "foreign", "collection_write_forbidden", "not a staff holder"],
  ["creator", "get", "visitor", "created", "ok", "a visitor identity satisfies creator"],
  ["creator", "get", "visitor", "foreign", "row_not_found", "someone else's row"],
  ["creator", "list", "anonymous", "mine", "collection_read_forbidden", "no identity: row-scoped reads stay 403"],
  ["creator", "get", "anonymous", "mine", "row_not_found", "anonymous rows are nobody's"],
  ["editor", "get", "visitor", "edited", "ok", "last writer"],
  ["author", "get", "visitor", "created", "row_not_found", "author = editor, not creator"],
  ["assignee", "get", "member", "assigned", "ok", "the relation field names the caller"],
  ["assignee", "get", "member", "created", "row_not_found", "the relation names someone else"],
  ["staff:assignee", "get", "member", "assigned", "row_not_found", "named, but not staff"],
  ["staff:assignee", "get", "grantStaff", "assigned", "ok", "staff and named"],
  ["anyone", "count", "anonymous", "foreign", "ok", "countRead: anyone"],
  ["member", "count", "visitor", "foreign", "collection_count_forbidden", "a visitor is not a member"],
  ["staff", "update", "grantPinKeyIn", "foreign", "ok", "inside the pin, staff may update"],
  ["staff", "update", "grantPinKeyOut", "foreign", "row_not_found", "outside the pin the row is hidden"],
  ["staff", "create", "grantPinKeyOut", "foreign", "collection_write_forbidden", "writes stay inside the pin"],
  ["staff", "create", "grantPinWhereIn", "foreign", "ok", "the new row satisfies the pin"],
  ["creator", "update", "member", "foreign", "collection_write_forbidden", "readable, but not the creator"],
  ["creator", "updateHidden", "member", "foreign", "row_not_found", "read: creator hides it from update"],
  ["creator", "delete", "visitor", "created", "ok", "delete: creator"],
  ["creator", "deleteHidden", "visitor", "edited", "row_not_found", "read: creator hides it from delete"],
  ["owner", "delete", "member", "mine", "collection_delete_forbidden", "readable, not in delete"],
  ["owner", "purge", "member", "mine", "purge_forbidden", "purge is owner or agent only"],
  ["owner", "purge", "agent", "foreign", "ok", "the agent purges"],
  ["anyone", "purge", "credAll", "mine", "purge_forbidden", "a credential is not the owner"],
  ["anyone", "restore", "memberLead", "mine", "forbidden", "restore is owner or agent only"],
  ["anyone", "listDeleted", "leaseWrite", "mine", "forbidden", "the deleted list is owner or agent only"],
  ["owner", "get", "credAll", "foreign", "ok", "allowlist ∩ owner authority"],
  ["staff", "get", "credAll", "foreign", "row_not_found", "a credential carries no role"],
  ["owner", "get", "credNoOps", "foreign", "credential_scope_forbidden", "read not named"],
  ["owner", "get", "credOther", "foreign", "credential_scope_forbidden", "explicit: unnamed collection"],
  ["owner", "get", "credFollowing", "foreign", "ok", "following: unnamed falls to the owner"],
  ["owner", "update", "credFollowingCarve", "mine", "credential_scope_forbidden", "named entries narrow under following"],
  ["owner", "get", "credOwn", "foreign", "credential_scope_forbidden", "scope own on another's row"],
  ["owner", "get", "credOwn", "edited", "ok", "it wrote the row last"],
  ["creator", "get", "credOwn", "foreign", "row_not_found", "hidden before scope own is asked"],
  ["owner", "list", "credOwn", "foreign", "ok:unseen", "scope own narrows the list"],
  ["owner", "create", "credOwn", "foreign", "ok", "create is not row-addressed"],
  ["owner", "delete", "leaseWrite", "mine", "credential_scope_forbidden", "a lease never deletes"],
  ["owner", "update", "leaseWrite", "foreign", "ok", "declared write"],
  ["owner", "update", "leaseRead", "foreign", "credential_scope_forbidden", "declared read only"],
  ["owner", "get", "leaseWrite", "foreign", "ok", "writes imply read"],
  ["owner", "get", "leaseOther", "foreign", "credential_scope_forbidden", "undeclared collection"],
  ["member:own", "get", "owner", "edited", "ok", "owner is a member, and wrote it last"],
  ["member:own", "get", "owner", "created", "row_not_found", "created it but did not write last"],
  ["anyone:creator", "create", "anonymous", "foreign", "ok", "anyone:creator in write admits anyone"],
  ["anyone:creator", "get", "anonymous", "mine", "row_not_found", "but the anonymous never read it back"],
  ["anyone:creator", "list", "visitor", "created", "ok:seen", "a visitor does"],
];

describe("hand-checked expectations", () => {
  for (const [subject, verb, principal, variant, outcome, why] of HAND) {
    it(`${subject} · ${verb} · ${principal} on a ${variant} row → ${outcome} (${why})`, () => {
      expect(run(verb, subject, principal, variant), "engine").toBe(outcome);
      expect(expected(verb, subject, principal, variant), "oracle").toBe(outcome);
    });
  }
});
