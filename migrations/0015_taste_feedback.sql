CREATE TABLE `feedback_items` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`type` text NOT NULL,
	`message` text NOT NULL,
	`app_id` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `feedback_items_agent` ON `feedback_items` (`agent_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `taste_notes` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`notes` text NOT NULL,
	`bytes` integer NOT NULL,
	`updated_at` text NOT NULL
);
