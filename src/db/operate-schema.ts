/**
 * The D1 side of an app's operating surface (spec A: migration-mode, unrestricted,
 * domain, analytics): each lives in D1 because the effect consumer, the schedules sweep
 * and the Worker's host routing read it before any AppStore is reached, and because a
 * domain must be unique across every app.
 */
import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * One span of migration mode: effects of writes made inside [started_at, ends_at) are
 * recorded silent, and schedules do not fire while one is open. Turning the mode off early
 * moves `ends_at` back to that instant, so the span stays as the record of what was quiet.
 * Times are ISO strings, comparable with a write's `ts`.
 */
export const appMigrationSpans = sqliteTable("app_migration_spans", {
  appId: text("app_id").notNull(),
  startedAt: text("started_at").notNull(),
  endsAt: text("ends_at").notNull(),
  reason: text("reason"),
}, (t) => [primaryKey({ columns: [t.appId, t.startedAt] })]);

/** A private app whose page may reach any internet host: present while on. */
export const appUnrestricted = sqliteTable("app_unrestricted", {
  appId: text("app_id").primaryKey(),
  enabledAt: text("enabled_at").notNull(),
  enabledByHumanId: text("enabled_by_human_id").notNull(),
});

/**
 * A custom domain bound to an app. The first one bound serves (`redirect_to` null); each
 * later one is an alias redirecting to it. `first_request_at` is when a request first
 * reached the relay under the domain: proof its DNS points here.
 */
export const appDomains = sqliteTable("app_domains", {
  domain: text("domain").primaryKey(),
  appId: text("app_id").notNull(),
  redirectTo: text("redirect_to"),
  verifyToken: text("verify_token").notNull(),
  createdAt: text("created_at").notNull(),
  firstRequestAt: text("first_request_at"),
}, (t) => [index("app_domains_app").on(t.appId)]);

/**
 * Served page views rolled up per app, UTC day, hour, country and referrer host (empty
 * string when unknown). `uniques` counts visitors first seen that day in this bucket, so
 * a day's uniques are the sum of its buckets.
 */
export const appPageViews = sqliteTable("app_page_views", {
  appId: text("app_id").notNull(),
  day: text("day").notNull(),
  hour: integer("hour").notNull(),
  country: text("country").notNull(),
  referrer: text("referrer").notNull(),
  views: integer("views").notNull(),
  uniques: integer("uniques").notNull(),
}, (t) => [primaryKey({ columns: [t.appId, t.day, t.hour, t.country, t.referrer] })]);

/** Visitors seen today, as a hash salted with the day's salt; older days are deleted. */
export const appVisitorDays = sqliteTable("app_visitor_days", {
  appId: text("app_id").notNull(),
  day: text("day").notNull(),
  visitorHash: text("visitor_hash").notNull(),
}, (t) => [primaryKey({ columns: [t.appId, t.day, t.visitorHash] })]);

/** The random salt of one UTC day; deleted once the day is over, so old hashes cannot be recomputed. */
export const analyticsSalts = sqliteTable("analytics_salts", {
  day: text("day").primaryKey(),
  salt: text("salt").notNull(),
});
