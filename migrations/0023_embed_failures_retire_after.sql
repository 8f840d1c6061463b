-- Embedding: a record an embedding call refused alone counts a failure, and at 3 it leaves the partial indexes of
-- records to embed (src/db/vectors.ts MAX_EMBED_FAILURES), counted for health by its own small partial index.
-- Sessions: retire_after says when an ended session object may empty its storage, cleared once it has.
DROP INDEX `idx_obs_unembedded`;--> statement-breakpoint
ALTER TABLE `observations` ADD `embed_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_obs_embed_skipped` ON `observations` (`team_id`) WHERE embed_failures >= 3;--> statement-breakpoint
CREATE INDEX `idx_obs_unembedded` ON `observations` (`team_id`,`id`) WHERE embedded_at IS NULL AND deleted_at IS NULL AND embed_failures < 3;--> statement-breakpoint
DROP INDEX `idx_prompts_unembedded`;--> statement-breakpoint
ALTER TABLE `prompts` ADD `embed_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_prompts_embed_skipped` ON `prompts` (`team_id`) WHERE embed_failures >= 3;--> statement-breakpoint
CREATE INDEX `idx_prompts_unembedded` ON `prompts` (`team_id`,`id`) WHERE embedded_at IS NULL AND embed_failures < 3;--> statement-breakpoint
DROP INDEX `idx_summaries_unembedded`;--> statement-breakpoint
ALTER TABLE `summaries` ADD `embed_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_summaries_embed_skipped` ON `summaries` (`team_id`) WHERE embed_failures >= 3;--> statement-breakpoint
CREATE INDEX `idx_summaries_unembedded` ON `summaries` (`team_id`,`id`) WHERE embedded_at IS NULL AND deleted_at IS NULL AND embed_failures < 3;--> statement-breakpoint
ALTER TABLE `sessions` ADD `retire_after` integer;--> statement-breakpoint
-- Sessions that ended before this column existed are each looked at once by the daily sweep, a day after their end
-- by the client clock (the default retention), in case their object still holds text: the object decides.
-- Imported sessions have no object.
UPDATE `sessions` SET `retire_after` = `ended_at` + 86400000 WHERE `ended_at` IS NOT NULL AND `imported_at` IS NULL;--> statement-breakpoint
CREATE INDEX `idx_sessions_retire` ON `sessions` (`retire_after`,`id`) WHERE retire_after IS NOT NULL;