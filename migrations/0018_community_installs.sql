CREATE TABLE `review_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`review_id` text NOT NULL,
	`reporter_human_id` text NOT NULL,
	`reason` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_reports_once` ON `review_reports` (`review_id`,`reporter_human_id`);--> statement-breakpoint
CREATE TABLE `template_daily_stats` (
	`snapshot_id` text NOT NULL,
	`publisher_human_id` text NOT NULL,
	`day` text NOT NULL,
	`tries` integer NOT NULL,
	`installs` integer NOT NULL,
	`views` integer NOT NULL,
	PRIMARY KEY(`snapshot_id`, `day`)
);
--> statement-breakpoint
CREATE INDEX `template_daily_stats_publisher` ON `template_daily_stats` (`publisher_human_id`,`day`);--> statement-breakpoint
CREATE TABLE `template_installs` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`installed_snapshot_id` text NOT NULL,
	`snapshot_id` text NOT NULL,
	`template_version` text NOT NULL,
	`publisher_human_id` text NOT NULL,
	`template_slug` text,
	`installer_human_id` text NOT NULL,
	`installer_agent_id` text,
	`previous_app_version` integer,
	`previous_snapshot_id` text,
	`previous_template_version` text,
	`last_upgraded_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `template_installs_app` ON `template_installs` (`app_id`);--> statement-breakpoint
CREATE INDEX `template_installs_installer` ON `template_installs` (`installer_human_id`,`publisher_human_id`,`template_slug`);--> statement-breakpoint
CREATE INDEX `template_installs_snapshot` ON `template_installs` (`installed_snapshot_id`);--> statement-breakpoint
CREATE TABLE `template_reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`install_id` text NOT NULL,
	`snapshot_id` text NOT NULL,
	`template_publisher_human_id` text NOT NULL,
	`template_slug` text,
	`reviewer_human_id` text NOT NULL,
	`stars` integer NOT NULL,
	`body` text,
	`status` text NOT NULL,
	`held_reason` text,
	`publisher_response` text,
	`publisher_responded_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `template_reviews_install` ON `template_reviews` (`install_id`);--> statement-breakpoint
CREATE INDEX `template_reviews_publisher` ON `template_reviews` (`template_publisher_human_id`,`status`);