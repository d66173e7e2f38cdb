CREATE TABLE `template_region_stats` (
	`snapshot_id` text NOT NULL,
	`publisher_human_id` text NOT NULL,
	`day` text NOT NULL,
	`region` text NOT NULL,
	`tries` integer NOT NULL,
	`installs` integer NOT NULL,
	PRIMARY KEY(`snapshot_id`, `day`, `region`)
);
--> statement-breakpoint
CREATE INDEX `template_region_stats_publisher` ON `template_region_stats` (`publisher_human_id`,`day`);