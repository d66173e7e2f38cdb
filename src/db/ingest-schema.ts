/**
 * The D1 side of inbound hooks (src/effects/ingest/): one row per hook an app's manifest
 * ever declared (kept when the rule leaves, disabled, so its URL and counts come back with
 * it), and the delivery journal. A delivery that resolved a dedupe value holds it in
 * `dedupeValue` while it is processing or accepted; the unique index makes a second
 * delivery with the same value a duplicate. SQLite lets NULLs repeat in a unique index, so
 * a failed delivery releases its value by setting it to null (`dedupeKey` keeps what it was).
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * A hook: its stable id and URL secret (the URL is `{API}/v1/ingest/<id>/<urlSecret>`, shown
 * to the owner, so the secret is kept as it is), the rule as last deployed (`ruleJson`, with
 * the listed rule fields beside it; all null once the rule left the manifest and
 * `disabledAt` is set), and the signing secret with the one it replaced for a grace window.
 */
export const ingestHooks = sqliteTable("ingest_hooks", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  name: text("name").notNull(),
  urlSecret: text("url_secret").notNull(),
  ruleJson: text("rule_json"),
  collection: text("collection"),
  mode: text("mode"),
  wake: integer("wake", { mode: "boolean" }),
  handshake: text("handshake"),
  verifyScheme: text("verify_scheme"),
  disabledAt: text("disabled_at"),
  createdAt: text("created_at").notNull(),
  signingSecret: text("signing_secret"),
  signingFingerprint: text("signing_fingerprint"),
  signingSetAt: text("signing_set_at"),
  previousSigningSecret: text("previous_signing_secret"),
  previousUntil: text("previous_until"),
}, (t) => [uniqueIndex("ingest_hooks_app_name").on(t.appId, t.name)]);

/**
 * One delivery: which hook, how it came (`live`, `backfill`, `replay`), what became of it,
 * the raw body as received (`payload`, at most INGEST_MAX_BODY_BYTES), the row it wrote,
 * and why it failed. `claimedAt` (ms) is when its processing was last taken up, so a
 * delivery left `processing` by a relay that died is taken over, not lost.
 */
export const ingestDeliveries = sqliteTable("ingest_deliveries", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  hookId: text("hook_id").notNull(),
  hookName: text("hook_name").notNull(),
  source: text("source", { enum: ["live", "backfill", "replay"] }).notNull(),
  status: text("status", { enum: ["processing", "accepted", "dropped_duplicate", "failed"] }).notNull(),
  dedupeKey: text("dedupe_key"),
  dedupeValue: text("dedupe_value"),
  payload: text("payload").notNull(),
  rowKey: text("row_key"),
  errorCode: text("error_code"),
  errorMessage: text("error_message"),
  replayOfId: text("replay_of_id"),
  createdAt: text("created_at").notNull(),
  claimedAt: integer("claimed_at").notNull(),
}, (t) => [
  uniqueIndex("ingest_deliveries_dedupe").on(t.hookId, t.dedupeValue),
  index("ingest_deliveries_app_created").on(t.appId, t.createdAt),
  index("ingest_deliveries_hook_status").on(t.hookId, t.status),
]);
