/**
 * The D1 schema of outbound connections (WIRE §2.6): credentials an app's webhooks send
 * to one allowed host, either a static header or an oauth2 grant the owner consented to
 * in a browser. Every secret (a static header value, an oauth2 client secret, access and
 * refresh tokens, a pending consent's PKCE verifier) is stored sealed with AES-GCM under a
 * key derived from the CONNECTIONS_KEY Worker secret (src/connections/sealing.ts); only a
 * short fingerprint of the secret the caller gave is ever shown.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

export const appConnections = sqliteTable("app_connections", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["static", "oauth2"] }).notNull(),
  provider: text("provider"),
  label: text("label"),
  /** An exact DNS host, or `*.` and a host: the only host the header is ever sent to. */
  allowedHost: text("allowed_host").notNull(),
  headerName: text("header_name").notNull(),
  /** oauth2: the word before the access token in the header (default Bearer); null for static. */
  authScheme: text("auth_scheme"),
  status: text("status", { enum: ["pending_auth", "active", "needs_reauth"] }).notNull(),
  /** Sealed: the header value (static) or the client secret (oauth2). */
  secretSealed: text("secret_sealed").notNull(),
  /** The first 8 hex of the sha256 of that secret. */
  secretFingerprint: text("secret_fingerprint").notNull(),
  authorizeUrl: text("authorize_url"),
  tokenEndpoint: text("token_endpoint"),
  clientId: text("client_id"),
  /** Space-delimited, as sent in the authorization request. */
  scopes: text("scopes"),
  /** The token-response field holding the API base URL (captured into instance_base_url). */
  instanceField: text("instance_field"),
  /** JSON objects of extra string parameters for the authorization and token requests. */
  authParamsJson: text("auth_params_json"),
  tokenParamsJson: text("token_params_json"),
  accessTokenSealed: text("access_token_sealed"),
  refreshTokenSealed: text("refresh_token_sealed"),
  /** When the access token stops working (ISO); null: the provider gave no lifetime. */
  expiresAt: text("expires_at"),
  instanceBaseUrl: text("instance_base_url"),
  /**
   * Bumped by every change of the stored tokens (consent, refresh, reauth flag). A refresh
   * writes only over the generation it read, so two refreshing at once never lose a
   * rotated refresh token, and a failure seen by the loser never flags a fresh grant.
   */
  tokenGeneration: integer("token_generation").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [uniqueIndex("app_connections_name").on(t.appId, t.name)]);

/**
 * A consent in progress: the owner was sent to the provider with `state` (stored as its
 * sha256) and a PKCE challenge; the callback finds the connection by the state, checks it
 * is the same person, and spends the row. Expired rows are cleared when the next consent starts.
 */
export const connectionAuthorizations = sqliteTable("connection_authorizations", {
  stateHash: text("state_hash").primaryKey(),
  connectionId: text("connection_id").notNull(),
  appId: text("app_id").notNull(),
  humanId: text("human_id").notNull(),
  codeVerifierSealed: text("code_verifier_sealed").notNull(),
  expiresAt: text("expires_at").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [
  index("connection_authorizations_connection").on(t.connectionId),
  index("connection_authorizations_expiry").on(t.expiresAt),
]);
