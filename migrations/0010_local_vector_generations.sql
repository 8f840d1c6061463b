CREATE TABLE `local_vector_generations` (
	`team_id` integer NOT NULL,
	`kind` text NOT NULL,
	`generation` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`team_id`, `kind`)
);
--> statement-breakpoint
-- Every write to the local vectors of a kind of a team moves its counter (the candidate lists of the local index
-- are kept per isolate and re-read when it moved). No OR IGNORE and no upsert: the conflict clause of a trigger
-- gives way to that of the firing statement, and the local index writes vectors with an upsert, so the row is made
-- only when missing.
CREATE TRIGGER `local_vectors_generation_ai` AFTER INSERT ON `local_vectors` BEGIN
  INSERT INTO `local_vector_generations` (`team_id`, `kind`, `generation`)
    SELECT NEW.team_id, NEW.kind, 0 WHERE NOT EXISTS (SELECT 1 FROM `local_vector_generations` WHERE `team_id` = NEW.team_id AND `kind` = NEW.kind);
  UPDATE `local_vector_generations` SET `generation` = `generation` + 1 WHERE `team_id` = NEW.team_id AND `kind` = NEW.kind;
END;--> statement-breakpoint
CREATE TRIGGER `local_vectors_generation_au` AFTER UPDATE ON `local_vectors` BEGIN
  INSERT INTO `local_vector_generations` (`team_id`, `kind`, `generation`)
    SELECT NEW.team_id, NEW.kind, 0 WHERE NOT EXISTS (SELECT 1 FROM `local_vector_generations` WHERE `team_id` = NEW.team_id AND `kind` = NEW.kind);
  UPDATE `local_vector_generations` SET `generation` = `generation` + 1 WHERE (`team_id` = NEW.team_id AND `kind` = NEW.kind) OR (`team_id` = OLD.team_id AND `kind` = OLD.kind);
END;--> statement-breakpoint
CREATE TRIGGER `local_vectors_generation_ad` AFTER DELETE ON `local_vectors` BEGIN
  INSERT INTO `local_vector_generations` (`team_id`, `kind`, `generation`)
    SELECT OLD.team_id, OLD.kind, 0 WHERE NOT EXISTS (SELECT 1 FROM `local_vector_generations` WHERE `team_id` = OLD.team_id AND `kind` = OLD.kind);
  UPDATE `local_vector_generations` SET `generation` = `generation` + 1 WHERE `team_id` = OLD.team_id AND `kind` = OLD.kind;
END;
