-- The text of a record does not change while a move copies its team (src/transfer/move-job.ts, copy first): the change
-- log of 0024 notes the state of a record (project, links, hold-back), not its words, so an edit or a revert made during
-- the copy would reach the new database as its history without its text. The edit answers 503 team_moving instead, as
-- the rename of a project does, and is sent again once the move is over.
CREATE TRIGGER `observations_text_while_moving` BEFORE UPDATE OF `title`, `subtitle`, `narrative`, `facts`, `concepts`, `files_read`, `files_modified` ON `observations`
WHEN EXISTS (SELECT 1 FROM `move_tracking` WHERE `team_id` = OLD.team_id AND `until` > strftime('%s', 'now') * 1000)
BEGIN
  SELECT RAISE(ABORT, 'team_moving');
END;
