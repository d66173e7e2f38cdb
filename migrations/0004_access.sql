CREATE TABLE `grant_holders` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`app_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grant_holders_token` ON `grant_holders` (`token_hash`);--> statement-breakpoint
CREATE INDEX `grant_holders_grant` ON `grant_holders` (`grant_id`);--> statement-breakpoint
CREATE TABLE `grant_links` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`role` text NOT NULL,
	`mode` text NOT NULL,
	`max_uses` integer,
	`use_count` integer NOT NULL,
	`claim_count` integer NOT NULL,
	`label` text,
	`pin_row_key` text,
	`pin_where_json` text,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `grant_links_app` ON `grant_links` (`app_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `grant_links_token` ON `grant_links` (`token_hash`);--> statement-breakpoint
CREATE TABLE `service_credentials` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`label` text,
	`mode` text NOT NULL,
	`grants_json` text NOT NULL,
	`members` integer NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`previous_token_hash` text,
	`previous_token_prefix` text,
	`previous_expires_at` text,
	`expires_at` text,
	`paused_at` text,
	`revoked_at` text,
	`rotated_at` text,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`last_used_at` text
);
--> statement-breakpoint
CREATE INDEX `service_credentials_app` ON `service_credentials` (`app_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `service_credentials_token` ON `service_credentials` (`token_hash`);--> statement-breakpoint
CREATE INDEX `service_credentials_previous_token` ON `service_credentials` (`previous_token_hash`);