CREATE TABLE `digest_runs` (
	`team_id` integer PRIMARY KEY NOT NULL,
	`period` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_attempt_at` integer,
	`last_ok_at` integer,
	`last_error` text,
	`failing_since` integer,
	`sent_period` text,
	`sent_until` integer,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action
);
