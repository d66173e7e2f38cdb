CREATE TABLE `idp_sign_in_attempts` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text NOT NULL,
	`return_to` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idp_sign_in_attempts_expires` ON `idp_sign_in_attempts` (`expires_at`);