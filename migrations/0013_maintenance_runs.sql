CREATE TABLE `maintenance_runs` (
	`job` text PRIMARY KEY NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`ok` integer,
	`error` text,
	`detail` text DEFAULT '{}' NOT NULL
);
