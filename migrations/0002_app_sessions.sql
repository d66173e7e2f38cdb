CREATE TABLE `app_session_grants` (
	`grant_hash` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`human_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text
);
--> statement-breakpoint
CREATE INDEX `app_session_grants_expires` ON `app_session_grants` (`expires_at`);