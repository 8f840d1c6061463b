CREATE TABLE `team_shards` (
	`team_id` integer PRIMARY KEY NOT NULL,
	`shard` text NOT NULL,
	`placed_at` integer NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action
);
