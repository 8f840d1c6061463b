CREATE TABLE `prime_tombstones` (
	`team_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`team_id`, `project_id`, `hash`)
);
