CREATE TABLE `schedule_firings` (
	`app_id` text NOT NULL,
	`rule_id` text NOT NULL,
	`row_key` text NOT NULL,
	`local_date` text NOT NULL,
	`action` text NOT NULL,
	`fired_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `rule_id`, `row_key`, `local_date`)
);
--> statement-breakpoint
CREATE INDEX `schedule_firings_app_day` ON `schedule_firings` (`app_id`,`local_date`,`action`);--> statement-breakpoint
CREATE INDEX `schedule_firings_day` ON `schedule_firings` (`local_date`);--> statement-breakpoint
CREATE TABLE `schedule_scans` (
	`app_id` text PRIMARY KEY NOT NULL,
	`local_date` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer
);
