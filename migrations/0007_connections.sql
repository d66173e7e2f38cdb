CREATE TABLE `app_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`provider` text,
	`label` text,
	`allowed_host` text NOT NULL,
	`header_name` text NOT NULL,
	`auth_scheme` text,
	`status` text NOT NULL,
	`secret_sealed` text NOT NULL,
	`secret_fingerprint` text NOT NULL,
	`authorize_url` text,
	`token_endpoint` text,
	`client_id` text,
	`scopes` text,
	`instance_field` text,
	`auth_params_json` text,
	`token_params_json` text,
	`access_token_sealed` text,
	`refresh_token_sealed` text,
	`expires_at` text,
	`instance_base_url` text,
	`token_generation` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_connections_name` ON `app_connections` (`app_id`,`name`);--> statement-breakpoint
CREATE TABLE `connection_authorizations` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`app_id` text NOT NULL,
	`human_id` text NOT NULL,
	`code_verifier_sealed` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `connection_authorizations_connection` ON `connection_authorizations` (`connection_id`);--> statement-breakpoint
CREATE INDEX `connection_authorizations_expiry` ON `connection_authorizations` (`expires_at`);