CREATE TABLE `account_deletions` (
	`human_id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_deletions_token` ON `account_deletions` (`token_hash`);--> statement-breakpoint
CREATE TABLE `app_favorites` (
	`human_id` text NOT NULL,
	`app_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`human_id`, `app_id`)
);
--> statement-breakpoint
CREATE INDEX `app_favorites_app` ON `app_favorites` (`app_id`);--> statement-breakpoint
CREATE TABLE `app_transfers` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`from_human_id` text NOT NULL,
	`to_email` text NOT NULL,
	`token_hash` text NOT NULL,
	`keep_as_member` integer NOT NULL,
	`status` text NOT NULL,
	`created_by_agent_id` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`resolved_at` text,
	`accepted_by_human_id` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_transfers_token` ON `app_transfers` (`token_hash`);--> statement-breakpoint
CREATE INDEX `app_transfers_app` ON `app_transfers` (`app_id`,`status`);--> statement-breakpoint
CREATE TABLE `app_views` (
	`human_id` text NOT NULL,
	`app_id` text NOT NULL,
	`last_viewed_at` text NOT NULL,
	`view_count` integer NOT NULL,
	PRIMARY KEY(`human_id`, `app_id`)
);
--> statement-breakpoint
CREATE INDEX `app_views_recent` ON `app_views` (`human_id`,`last_viewed_at`);--> statement-breakpoint
CREATE INDEX `app_views_app` ON `app_views` (`app_id`);--> statement-breakpoint
CREATE TABLE `org_members` (
	`org_id` text NOT NULL,
	`human_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`org_id`, `human_id`)
);
--> statement-breakpoint
CREATE INDEX `org_members_human` ON `org_members` (`human_id`);--> statement-breakpoint
CREATE TABLE `orgs` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`billing_human_id` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `preview_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`label` text,
	`created_by_agent_id` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `preview_tokens_token` ON `preview_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `preview_tokens_app` ON `preview_tokens` (`app_id`);--> statement-breakpoint
CREATE TABLE `push_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`human_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`expires_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscriptions_endpoint` ON `push_subscriptions` (`endpoint`);--> statement-breakpoint
CREATE INDEX `push_subscriptions_human` ON `push_subscriptions` (`human_id`);--> statement-breakpoint
CREATE TABLE `relay_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `signup_sources` (
	`human_id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`detail` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `upgrade_dismissals` (
	`human_id` text NOT NULL,
	`app_id` text NOT NULL,
	`version` text NOT NULL,
	`dismissed_at` text NOT NULL,
	PRIMARY KEY(`human_id`, `app_id`)
);
--> statement-breakpoint
CREATE INDEX `upgrade_dismissals_app` ON `upgrade_dismissals` (`app_id`);--> statement-breakpoint
CREATE TABLE `usage_flows` (
	`human_id` text NOT NULL,
	`app_id` text NOT NULL,
	`hour` text NOT NULL,
	`metric` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`human_id`, `hour`, `metric`, `app_id`)
);
