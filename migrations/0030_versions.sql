-- Versions (issue 38): every row of observation_events is a version of its record (creation is version 1, the
-- n-th row by id version n+1). An edit or a revert keeps what it changed in the record text as JSON in changes.
ALTER TABLE `observation_events` ADD `changes` text;
