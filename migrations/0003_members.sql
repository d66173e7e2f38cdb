CREATE TABLE `app_invites` (
	`app_id` text NOT NULL,
	`email` text NOT NULL,
	`token_hash` text NOT NULL,
	`custom_roles` text NOT NULL,
	`invited_by_human_id` text NOT NULL,
	`invited_by_agent_id` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`accepted_human_id` text,
	PRIMARY KEY(`app_id`, `email`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_invites_token` ON `app_invites` (`token_hash`);--> statement-breakpoint
CREATE TABLE `app_members` (
	`app_id` text NOT NULL,
	`human_id` text NOT NULL,
	`custom_roles` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `human_id`)
);
--> statement-breakpoint
CREATE INDEX `app_members_human` ON `app_members` (`human_id`);