/**
 * The D1 side of the schedules engine (src/effects/schedules/, WIRE §5.5 schedules[]):
 * which local day each app was last scanned for, so the cron sweep scans an app once per
 * day, and every (rule, row, date) that fired, so a row fires at most once per date and
 * the per-app daily caps can be counted.
 */
import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * The local day (`YYYY-MM-DD` in the app's timezone) an app was last scanned for. A scan
 * is claimed by writing the day with `startedAt` (ms, wall clock) and closed by
 * `finishedAt`; a claim left open past its lease (the sweep died mid-scan) is taken over.
 */
export const scheduleScans = sqliteTable("schedule_scans", {
  appId: text("app_id").primaryKey(),
  localDate: text("local_date").notNull(),
  startedAt: integer("started_at").notNull(),
  finishedAt: integer("finished_at"),
});

/**
 * One schedule rule fired for one row on one local date, with the action it took. The key
 * is what makes "at most once per date" hold; (app, date, action) counts the daily caps.
 */
export const scheduleFirings = sqliteTable("schedule_firings", {
  appId: text("app_id").notNull(),
  ruleId: text("rule_id").notNull(),
  rowKey: text("row_key").notNull(),
  localDate: text("local_date").notNull(),
  action: text("action", { enum: ["email", "webhook"] }).notNull(),
  firedAt: text("fired_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.appId, t.ruleId, t.rowKey, t.localDate] }),
  index("schedule_firings_app_day").on(t.appId, t.localDate, t.action),
  index("schedule_firings_day").on(t.localDate),
]);
