CREATE TABLE `attachment_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`attachment_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`once` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`use_count` integer DEFAULT 0 NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `attachment_tokens_token_hash_unique` ON `attachment_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `attachment_tokens_attachment` ON `attachment_tokens` (`attachment_id`);--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`scope` text NOT NULL,
	`account_id` text NOT NULL,
	`owner_agent_id` text,
	`app_id` text,
	`uploader_kind` text NOT NULL,
	`uploader_id` text,
	`anon_address_hash` text,
	`filename` text,
	`mime` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`status` text NOT NULL,
	`upload_secret_hash` text,
	`upload_expires_at` integer,
	`width` integer,
	`height` integer,
	`created_at` integer NOT NULL,
	`confirmed_at` integer,
	`deleted_at` integer
);
--> statement-breakpoint
CREATE INDEX `attachments_agent` ON `attachments` (`owner_agent_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `attachments_account` ON `attachments` (`account_id`);--> statement-breakpoint
CREATE INDEX `attachments_app` ON `attachments` (`app_id`);--> statement-breakpoint
CREATE INDEX `attachments_pending` ON `attachments` (`status`,`upload_expires_at`);