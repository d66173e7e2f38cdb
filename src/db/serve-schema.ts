/**
 * The D1 schema of app-origin sign-in: the one-time grants that `/authorize` on the API
 * origin hands to an app origin in the `#svc_grant=` fragment. Only the grant's sha256 is
 * stored; a grant is good for one exchange at `POST /_svc/session`, for two minutes, on
 * the app it was minted for. App sessions themselves are signed tokens kept in the page's
 * localStorage, so nothing else about them lives here.
 */
import { sqliteTable, text, index } from "drizzle-orm/sqlite-core";

export const appSessionGrants = sqliteTable("app_session_grants", {
  grantHash: text("grant_hash").primaryKey(),
  appId: text("app_id").notNull(),
  humanId: text("human_id").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
}, (t) => [index("app_session_grants_expires").on(t.expiresAt)]);
