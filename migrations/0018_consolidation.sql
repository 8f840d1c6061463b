-- Consolidation: a near-duplicate merged into the record that stands for it, kept as provenance. Merges are listed from their events.
ALTER TABLE `observations` ADD `merged_into` integer;--> statement-breakpoint
CREATE INDEX `idx_obs_merged` ON `observations` (`team_id`,`merged_into`) WHERE merged_into IS NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_obs_events_merge` ON `observation_events` (`team_id`,`created_at`) WHERE action = 'merge';