-- Hybrid search (issue 13) reads the newest 5,000 vectors of a kind of a team with a fingerprint of each (hex of
-- its first and last 8 bytes, so the isolate re-reads a vector only when it changed). Selecting that from the rows
-- read and sorted every 2 KB vector of the team on every query. The VIRTUAL column is computed on write into this
-- index only, whose order is the order of the query, so the read is answered from the index alone.
ALTER TABLE `local_vectors` ADD `fingerprint` text GENERATED ALWAYS AS ((hex(substr(embedding, 1, 8)) || hex(substr(embedding, -8)))) VIRTUAL;--> statement-breakpoint
CREATE INDEX `idx_local_vectors_fingerprint` ON `local_vectors` (`team_id`,`kind`,"record_id" desc,`part`,`project_id`,`type`,`fingerprint`);