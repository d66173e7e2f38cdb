/**
 * Sign-in attempts through the operator's identity provider (issue 14 item 7): what the
 * relay must remember between sending a browser to the provider and the provider sending
 * it back. Only the sha256 of `state` is stored (the browser holds the state itself, in
 * the query and in a cookie); the nonce and the PKCE verifier are per-attempt secrets that
 * live until the attempt is spent or ten minutes pass, and a spent attempt is deleted, so
 * a callback can be taken once.
 */
import { sqliteTable, text, index } from "drizzle-orm/sqlite-core";

export const idpSignInAttempts = sqliteTable("idp_sign_in_attempts", {
  stateHash: text("state_hash").primaryKey(),
  nonce: text("nonce").notNull(),
  codeVerifier: text("code_verifier").notNull(),
  returnTo: text("return_to"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
}, (table) => [index("idp_sign_in_attempts_expires").on(table.expiresAt)]);
