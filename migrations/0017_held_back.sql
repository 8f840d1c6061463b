DROP INDEX `idx_obs_readable`;--> statement-breakpoint
ALTER TABLE `observations` ADD `held_kinds` text;--> statement-breakpoint
ALTER TABLE `observations` ADD `released_at` integer;--> statement-breakpoint
ALTER TABLE `observations` ADD `released_by` integer;--> statement-breakpoint
CREATE INDEX `idx_obs_held` ON `observations` (`team_id`,`id`) WHERE held_kinds IS NOT NULL AND released_at IS NULL;--> statement-breakpoint
CREATE INDEX `idx_obs_readable` ON `observations` (`id`,`team_id`,`project_id`,`deleted_at`,`type`,`author_user_id`,`created_at`,`session_id`,`held_kinds`,`released_at`);--> statement-breakpoint
ALTER TABLE `prompts` ADD `held_kinds` text;--> statement-breakpoint
ALTER TABLE `prompts` ADD `released_at` integer;--> statement-breakpoint
ALTER TABLE `prompts` ADD `released_by` integer;--> statement-breakpoint
CREATE INDEX `idx_prompts_held` ON `prompts` (`team_id`,`id`) WHERE held_kinds IS NOT NULL AND released_at IS NULL;--> statement-breakpoint
ALTER TABLE `summaries` ADD `held_kinds` text;--> statement-breakpoint
ALTER TABLE `summaries` ADD `released_at` integer;--> statement-breakpoint
ALTER TABLE `summaries` ADD `released_by` integer;--> statement-breakpoint
CREATE INDEX `idx_summaries_held` ON `summaries` (`team_id`,`id`) WHERE held_kinds IS NOT NULL AND released_at IS NULL;