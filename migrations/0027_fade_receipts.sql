-- Use-based fading and receipts (issue 34). observations.renewed_at is when a record was stored or last used, and a
-- record not used within the team fade_after_days leaves the context index. fade_epoch is when this database began
-- keeping use times: no older record fades before the epoch plus fade_after_days, as nothing recorded their use.
-- receipts lists which records each injection of a session sent and how each was judged, deleted with the record.
CREATE TABLE `fade_epoch` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `receipts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`session_key` text NOT NULL,
	`project_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`device_id` integer DEFAULT 0 NOT NULL,
	`observation_id` integer,
	`channels` integer DEFAULT 0 NOT NULL,
	`evidence` text DEFAULT 'unknown' NOT NULL,
	`reasons` text DEFAULT '' NOT NULL,
	`sent` integer DEFAULT 1 NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`observation_id`) REFERENCES `observations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idx_receipts_record` ON `receipts` (`team_id`,`session_key`,`observation_id`);--> statement-breakpoint
CREATE INDEX `idx_receipts_observation` ON `receipts` (`observation_id`);--> statement-breakpoint
CREATE INDEX `idx_receipts_project` ON `receipts` (`team_id`,`project_id`);--> statement-breakpoint
CREATE INDEX `idx_receipts_start` ON `receipts` (`team_id`,`user_id`,`device_id`,`first_at`) WHERE observation_id IS NULL;--> statement-breakpoint
ALTER TABLE `observation_signals` ADD `used` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `observations` ADD `renewed_at` integer;--> statement-breakpoint
CREATE INDEX `idx_obs_renewed` ON `observations` (`team_id`,`project_id`,`renewed_at`) WHERE renewed_at IS NOT NULL;--> statement-breakpoint
INSERT INTO `fade_epoch` (`id`, `at`) VALUES (1, CAST(strftime('%s', 'now') AS INTEGER) * 1000);
