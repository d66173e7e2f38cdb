CREATE TABLE `app_versions` (
	`app_id` text NOT NULL,
	`version` integer NOT NULL,
	`manifest_json` text NOT NULL,
	`document_sha256` text NOT NULL,
	`document_bytes` integer NOT NULL,
	`assets_json` text NOT NULL,
	`source_hash` text NOT NULL,
	`compat` text NOT NULL,
	`breaks_json` text,
	`created_by_agent_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `version`)
);
--> statement-breakpoint
CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`owner_human_id` text NOT NULL,
	`created_by_agent_id` text NOT NULL,
	`visibility` text NOT NULL,
	`status` text NOT NULL,
	`current_version` integer,
	`timezone` text,
	`share_token_hash` text,
	`created_at` text NOT NULL,
	`last_activity_at` text NOT NULL,
	`deleted_at` text,
	`status_before_delete` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_slug` ON `apps` (`slug`);--> statement-breakpoint
CREATE INDEX `apps_owner_activity` ON `apps` (`owner_human_id`,`last_activity_at`);