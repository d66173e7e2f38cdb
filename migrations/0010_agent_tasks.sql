CREATE TABLE `agent_tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`source` text NOT NULL,
	`rule_id` text NOT NULL,
	`task_type` text NOT NULL,
	`prompt` text NOT NULL,
	`collection` text NOT NULL,
	`row_key` text NOT NULL,
	`op` text NOT NULL,
	`context` text NOT NULL,
	`reads` text NOT NULL,
	`writes` text NOT NULL,
	`lease_seconds` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`available_at` integer NOT NULL,
	`expires_at` integer,
	`lease_expires_at` integer,
	`lease_token_hash` text,
	`leased_by` text,
	`report` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_tasks_source` ON `agent_tasks` (`app_id`,`source`);--> statement-breakpoint
CREATE INDEX `agent_tasks_claimable` ON `agent_tasks` (`status`,`available_at`);--> statement-breakpoint
CREATE INDEX `agent_tasks_row` ON `agent_tasks` (`app_id`,`collection`,`row_key`);--> statement-breakpoint
CREATE INDEX `agent_tasks_app_created` ON `agent_tasks` (`app_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `agent_tasks_lease_token` ON `agent_tasks` (`lease_token_hash`);