CREATE TABLE `move_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`tbl` text NOT NULL,
	`row_id` integer,
	`k1` text,
	`k2` text
);
--> statement-breakpoint
CREATE INDEX `idx_move_changes_team` ON `move_changes` (`team_id`,`seq`);--> statement-breakpoint
CREATE TABLE `move_tracking` (
	`team_id` integer PRIMARY KEY NOT NULL,
	`move_id` text NOT NULL,
	`until` integer NOT NULL
);--> statement-breakpoint
-- A team move copies while the team writes (src/transfer/move-job.ts). While move_tracking holds a live row for
-- a team, every insert, update and delete of the team rows is noted in move_changes: the table, the row id, and
-- for a deleted row the keys that name it on the other database. Only the team being moved pays for a note: for
-- every other team each write reads one row of a table holding one row per move in progress.
-- A project key does not change while its team is tracked: the other database knows projects by key.
CREATE TRIGGER `projects_key_while_moving` BEFORE UPDATE OF `key` ON `projects`
WHEN NEW.key IS NOT OLD.key AND EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  SELECT RAISE(ABORT, 'team_moving');
END;
--> statement-breakpoint
CREATE TRIGGER `projects_moving_ai` AFTER INSERT ON `projects`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'projects', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `projects_moving_au` AFTER UPDATE ON `projects`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'projects', NEW.id, OLD.key, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `projects_moving_ad` AFTER DELETE ON `projects`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'projects', OLD.id, OLD.key, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_moving_ai` AFTER INSERT ON `sessions`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'sessions', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_moving_au` AFTER UPDATE ON `sessions`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'sessions', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_moving_ad` AFTER DELETE ON `sessions`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'sessions', OLD.id, OLD.session_key, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `prompts_moving_ai` AFTER INSERT ON `prompts`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'prompts', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `prompts_moving_au` AFTER UPDATE OF `project_id`, `session_id`, `held_kinds`, `released_at`, `released_by` ON `prompts`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'prompts', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `prompts_moving_ad` AFTER DELETE ON `prompts`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'prompts', OLD.id, (SELECT `session_key` FROM `sessions` WHERE `id` = OLD.session_id), OLD.prompt_number);
END;
--> statement-breakpoint
CREATE TRIGGER `observations_moving_ai` AFTER INSERT ON `observations`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'observations', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observations_moving_au` AFTER UPDATE OF `project_id`, `session_id`, `superseded_by`, `merged_into`, `held_kinds`, `released_at`, `released_by`, `deleted_at` ON `observations`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'observations', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observations_moving_ad` AFTER DELETE ON `observations`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'observations', OLD.id, (SELECT `session_key` FROM `sessions` WHERE `id` = OLD.session_id), OLD.content_hash);
END;
--> statement-breakpoint
CREATE TRIGGER `summaries_moving_ai` AFTER INSERT ON `summaries`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'summaries', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `summaries_moving_au` AFTER UPDATE OF `project_id`, `session_id`, `held_kinds`, `released_at`, `released_by`, `deleted_at` ON `summaries`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'summaries', NEW.id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `summaries_moving_ad` AFTER DELETE ON `summaries`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'summaries', OLD.id, (SELECT `session_key` FROM `sessions` WHERE `id` = OLD.session_id), OLD.content_hash);
END;
--> statement-breakpoint
CREATE TRIGGER `observation_signals_moving_ai` AFTER INSERT ON `observation_signals`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'signals', NEW.observation_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observation_signals_moving_au` AFTER UPDATE ON `observation_signals`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'signals', NEW.observation_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observation_signals_moving_ad` AFTER DELETE ON `observation_signals`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'signals', OLD.observation_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observer_usage_moving_ai` AFTER INSERT ON `observer_usage`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'usage', NEW.session_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observer_usage_moving_au` AFTER UPDATE ON `observer_usage`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'usage', NEW.session_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `observer_usage_moving_ad` AFTER DELETE ON `observer_usage`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'usage', OLD.session_id, NULL, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `project_aliases_moving_ai` AFTER INSERT ON `project_aliases`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'aliases', NULL, NEW.key, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `project_aliases_moving_au` AFTER UPDATE ON `project_aliases`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'aliases', NULL, NEW.key, OLD.key);
END;
--> statement-breakpoint
CREATE TRIGGER `project_aliases_moving_ad` AFTER DELETE ON `project_aliases`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'aliases', NULL, OLD.key, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `prime_tombstones_moving_ai` AFTER INSERT ON `prime_tombstones`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = NEW.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (NEW.team_id, 'tombstones', NEW.project_id, NULL, NEW.hash);
END;
--> statement-breakpoint
CREATE TRIGGER `prime_tombstones_moving_ad` AFTER DELETE ON `prime_tombstones`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  INSERT INTO `move_changes` (`team_id`, `tbl`, `row_id`, `k1`, `k2`) VALUES (OLD.team_id, 'tombstones', OLD.project_id, NULL, OLD.hash);
END;
