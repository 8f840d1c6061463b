-- Versions (issue 38): every row of observation_events is a version of its record (creation is version 1, the
-- n-th row by id version n+1). An edit or a revert keeps what it changed in the record text as JSON in changes.
-- Proposals: changes waiting for an admin (consolidation: review), deleted with any record they name.
CREATE TABLE `proposals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`kind` text NOT NULL,
	`observation_id` integer NOT NULL,
	`by_observation_id` integer,
	`reason` text,
	`actor` text NOT NULL,
	`actor_user_id` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`observation_id`) REFERENCES `observations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`by_observation_id`) REFERENCES `observations`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "proposals_kind" CHECK(kind IN ('merge','supersede'))
);
--> statement-breakpoint
CREATE INDEX `idx_proposals_by` ON `proposals` (`by_observation_id`);--> statement-breakpoint
CREATE INDEX `idx_proposals_obs` ON `proposals` (`observation_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `proposals_team_id_kind_observation_id_unique` ON `proposals` (`team_id`,`kind`,`observation_id`);--> statement-breakpoint
ALTER TABLE `observation_events` ADD `changes` text;