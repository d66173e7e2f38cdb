CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`source` text NOT NULL,
	`rule_id` text NOT NULL,
	`collection` text NOT NULL,
	`row_key` text NOT NULL,
	`op` text NOT NULL,
	`channel` text NOT NULL,
	`recipient` text NOT NULL,
	`human_id` text,
	`address` text,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`link` text,
	`status` text NOT NULL,
	`reason` text,
	`due_at` integer,
	`digest_id` text,
	`claimed_at` integer,
	`created_at` text NOT NULL,
	`sent_at` text,
	`read_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_source` ON `notifications` (`app_id`,`source`,`channel`,`recipient`);--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_submitter_once` ON `notifications` (`app_id`,`rule_id`,`row_key`) WHERE "notifications"."address" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `notifications_recipient` ON `notifications` (`app_id`,`channel`,`recipient`,`status`);--> statement-breakpoint
CREATE INDEX `notifications_inbox` ON `notifications` (`app_id`,`human_id`,`channel`,`created_at`);--> statement-breakpoint
CREATE INDEX `notifications_due` ON `notifications` (`status`,`due_at`);--> statement-breakpoint
CREATE INDEX `notifications_created` ON `notifications` (`created_at`);--> statement-breakpoint
CREATE TABLE `notify_mutes` (
	`app_id` text NOT NULL,
	`human_id` text NOT NULL,
	`channel` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `human_id`, `channel`)
);
