-- Team-wide hybrid search (issue 13) reads a team's newest 5,000 vector ids with a fingerprint of each vector
-- (hex of its first and last 8 bytes; the isolate re-reads a vector only when it changed). Selecting that from
-- the rows read and sorted every 2 KB vector of the team on every query; the VIRTUAL column is computed on
-- write into this index only, so the read is answered from the index alone, already newest first.
ALTER TABLE `local_vectors` ADD `fingerprint` text GENERATED ALWAYS AS ((hex(substr(embedding, 1, 8)) || hex(substr(embedding, -8)))) VIRTUAL;--> statement-breakpoint
CREATE INDEX `idx_local_vectors_fingerprint` ON `local_vectors` (`team_id`,`observation_id`,`project_id`,`type`,`fingerprint`);