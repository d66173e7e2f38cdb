/**
 * The permission engine's public surface. The AppStore Durable Object imports from here:
 * it builds nothing itself, it asks `authorize` and applies the answer (a refusal to
 * throw, a row filter to put in its query, the budget and challenge checks it still owes).
 * Everything here is pure and safe to call inside a storage transaction.
 */
export { roleAccess, type Access, type Level } from "./access";
export { authorize, sameJson, type Decision, type Op, type OpAllowances, type OpContexts, type WriteChecks } from "./authorize";
export { ALL_ROWS, makeFilter, matchesCond, matchesFilter, matchesTerm, pinTerms, type RowContext, type RowFilter, type RowTerm } from "./filters";
export {
  authorOf, identityOf, isOwnerLevel, isOwnerOrAgent, machineAuthor, sameAuthor,
  type Author, type Cond, type CondOp, type CredentialGrant, type CredentialOp, type GrantPin, type Principal, type PrincipalKind,
} from "./principal";
export { anonBudgetExceeded, refusals, type Refusal } from "./refusals";
export { inPopulation, reach, standing, type Reach, type Standing } from "./subjects";
