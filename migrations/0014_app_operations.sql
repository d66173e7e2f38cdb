CREATE TABLE `analytics_salts` (
	`day` text PRIMARY KEY NOT NULL,
	`salt` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `app_domains` (
	`domain` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`redirect_to` text,
	`verify_token` text NOT NULL,
	`created_at` text NOT NULL,
	`first_request_at` text
);
--> statement-breakpoint
CREATE INDEX `app_domains_app` ON `app_domains` (`app_id`);--> statement-breakpoint
CREATE TABLE `app_migration_spans` (
	`app_id` text NOT NULL,
	`started_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`reason` text,
	PRIMARY KEY(`app_id`, `started_at`)
);
--> statement-breakpoint
CREATE TABLE `app_page_views` (
	`app_id` text NOT NULL,
	`day` text NOT NULL,
	`hour` integer NOT NULL,
	`country` text NOT NULL,
	`referrer` text NOT NULL,
	`views` integer NOT NULL,
	`uniques` integer NOT NULL,
	PRIMARY KEY(`app_id`, `day`, `hour`, `country`, `referrer`)
);
--> statement-breakpoint
CREATE TABLE `app_unrestricted` (
	`app_id` text PRIMARY KEY NOT NULL,
	`enabled_at` text NOT NULL,
	`enabled_by_human_id` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `app_visitor_days` (
	`app_id` text NOT NULL,
	`day` text NOT NULL,
	`visitor_hash` text NOT NULL,
	PRIMARY KEY(`app_id`, `day`, `visitor_hash`)
);
