CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`at` text NOT NULL,
	`response_status` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	PRIMARY KEY(`delivery_id`, `attempt`)
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`source` text NOT NULL,
	`rule_id` text NOT NULL,
	`collection` text NOT NULL,
	`row_key` text NOT NULL,
	`op` text NOT NULL,
	`feed_seq` integer,
	`url` text NOT NULL,
	`connection` text,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`response_status` integer,
	`response_body` text,
	`error` text,
	`replay_of_id` text,
	`created_at` text NOT NULL,
	`delivered_at` text,
	`last_attempt_at` text,
	`next_attempt_at` integer,
	`scheduled_for` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_source` ON `webhook_deliveries` (`app_id`,`source`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_app_created` ON `webhook_deliveries` (`app_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_failure_notices` (
	`app_id` text NOT NULL,
	`rule_id` text NOT NULL,
	`notified_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `rule_id`)
);
--> statement-breakpoint
CREATE TABLE `webhook_secrets` (
	`app_id` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_expires_at` text,
	`created_at` text NOT NULL,
	`rotated_at` text
);
