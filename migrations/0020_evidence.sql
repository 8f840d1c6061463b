-- Evidence (issue 34): each file row of a record keeps the blob ids of the file when the record was made, a record keeps the names its text cites, and checkouts holds the last reported checkout of each device and project as hashed entries.
CREATE TABLE `checkouts` (
	`team_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`device_id` integer DEFAULT 0 NOT NULL,
	`head` text,
	`branch` text,
	`trunk` text,
	`history` text DEFAULT '' NOT NULL,
	`digest` text NOT NULL,
	`entries` text DEFAULT '{}' NOT NULL,
	`overlay` text DEFAULT '{}' NOT NULL,
	`reported_at` integer NOT NULL,
	PRIMARY KEY(`team_id`, `project_id`, `user_id`, `device_id`)
);
--> statement-breakpoint
CREATE INDEX `idx_checkouts_owner` ON `checkouts` (`team_id`,`user_id`,`device_id`);--> statement-breakpoint
CREATE INDEX `idx_checkouts_digest` ON `checkouts` (`team_id`,`project_id`,`digest`);--> statement-breakpoint
ALTER TABLE `observation_files` ADD `blob` text;--> statement-breakpoint
ALTER TABLE `observation_files` ADD `ws` text;--> statement-breakpoint
ALTER TABLE `observation_files` ADD `base` text;--> statement-breakpoint
ALTER TABLE `observations` ADD `names` text DEFAULT '[]' NOT NULL;