CREATE TABLE `ingest_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`hook_id` text NOT NULL,
	`hook_name` text NOT NULL,
	`source` text NOT NULL,
	`status` text NOT NULL,
	`dedupe_key` text,
	`dedupe_value` text,
	`payload` text NOT NULL,
	`row_key` text,
	`error_code` text,
	`error_message` text,
	`replay_of_id` text,
	`created_at` text NOT NULL,
	`claimed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ingest_deliveries_dedupe` ON `ingest_deliveries` (`hook_id`,`dedupe_value`);--> statement-breakpoint
CREATE INDEX `ingest_deliveries_app_created` ON `ingest_deliveries` (`app_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `ingest_deliveries_hook_status` ON `ingest_deliveries` (`hook_id`,`status`);--> statement-breakpoint
CREATE TABLE `ingest_hooks` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`name` text NOT NULL,
	`url_secret` text NOT NULL,
	`rule_json` text,
	`collection` text,
	`mode` text,
	`wake` integer,
	`handshake` text,
	`verify_scheme` text,
	`disabled_at` text,
	`created_at` text NOT NULL,
	`signing_secret` text,
	`signing_fingerprint` text,
	`signing_set_at` text,
	`previous_signing_secret` text,
	`previous_until` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ingest_hooks_app_name` ON `ingest_hooks` (`app_id`,`name`);