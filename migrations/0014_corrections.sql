CREATE TABLE `observation_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`observation_id` integer NOT NULL,
	`action` text NOT NULL,
	`by_observation_id` integer,
	`actor_user_id` integer,
	`actor` text DEFAULT 'user' NOT NULL,
	`reason` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`observation_id`) REFERENCES `observations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idx_obs_events_obs` ON `observation_events` (`observation_id`,`id`);--> statement-breakpoint
CREATE TABLE `observation_signals` (
	`observation_id` integer PRIMARY KEY NOT NULL,
	`team_id` integer NOT NULL,
	`fetched` integer DEFAULT 0 NOT NULL,
	`useful` integer DEFAULT 0 NOT NULL,
	`wrong` integer DEFAULT 0 NOT NULL,
	`outdated` integer DEFAULT 0 NOT NULL,
	`review` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`observation_id`) REFERENCES `observations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idx_obs_signals_review` ON `observation_signals` (`team_id`,`review`) WHERE review IS NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_obs_superseded` ON `observations` (`team_id`,`id`) WHERE superseded_by IS NOT NULL;