CREATE TABLE `publishers` (
	`human_id` text PRIMARY KEY NOT NULL,
	`handle` text,
	`display_name` text,
	`bio` text,
	`url` text,
	`trust_level` text DEFAULT 'new' NOT NULL,
	`trust_set_at` text,
	`trust_set_by_human_id` text,
	`claimed_at` text,
	`created_at` text NOT NULL,
	`first_published_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `publishers_handle` ON `publishers` (`handle`);--> statement-breakpoint
CREATE TABLE `template_snapshots` (
	`id` text PRIMARY KEY NOT NULL,
	`publisher_human_id` text NOT NULL,
	`published_by_agent_id` text NOT NULL,
	`source_app_id` text NOT NULL,
	`source_app_version` integer NOT NULL,
	`version_id` text NOT NULL,
	`name` text NOT NULL,
	`slug` text,
	`version` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`long_description` text,
	`category` text,
	`tags_json` text NOT NULL,
	`document_sha256` text NOT NULL,
	`document_bytes` integer NOT NULL,
	`manifest_json` text NOT NULL,
	`assets_json` text NOT NULL,
	`seed_rows_json` text NOT NULL,
	`seeded_row_count` integer NOT NULL,
	`attest_example_only` integer,
	`setup_steps_json` text NOT NULL,
	`settings_collection` text,
	`external_destinations_json` text NOT NULL,
	`changelog` text,
	`license` text,
	`license_terms` text,
	`derived_from_snapshot_id` text,
	`review_status` text NOT NULL,
	`expedited` integer NOT NULL,
	`auto_approved` integer NOT NULL,
	`reviewed_at` text,
	`reviewed_by_human_id` text,
	`review_note` text,
	`superseded_at` text,
	`published_at` text NOT NULL,
	`unpublished_at` text
);
--> statement-breakpoint
CREATE INDEX `template_snapshots_publisher_slug` ON `template_snapshots` (`publisher_human_id`,`slug`,`published_at`);--> statement-breakpoint
CREATE INDEX `template_snapshots_queue` ON `template_snapshots` (`review_status`,`expedited`,`published_at`);--> statement-breakpoint
CREATE INDEX `template_snapshots_source_app` ON `template_snapshots` (`source_app_id`);