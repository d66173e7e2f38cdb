/**
 * The manifest module's public surface. Everything else in the relay (deploy routes, the
 * AppStore Durable Object, the permission engine, the rule engines, the page CSP) imports
 * from here and reads only the compiled output. The module is pure: no I/O, no bindings,
 * no env; limits and flags come in as a plain object.
 */
export { parseManifest, manifestObject, resolveLimits, manifestLimitsFrom } from "./parse";
export { validateRow, rowValidator, validateInputData, type RowError, type RowValidation, type RowValidator, type InputRow } from "./schema";
export { compatGate, compatParts, type CompatBreak, type CompatParts, type CompatResult } from "./compat";
export { disclosure, type Disclosure } from "./disclosure";
export { CAPABILITIES, originCovered } from "./origins";
export { schemaTightenings } from "./schema-compat";
export { collectionNotFound, declaredCollection } from "./declared";
export * from "./types";
