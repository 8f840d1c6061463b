-- Roles gain reader (issue 38): reads the team memory, writes only to their own private projects. The role is a
-- CHECK constraint, so users is rebuilt (drizzle-kit generated the copy). D1 runs a migration in a transaction,
-- where PRAGMA foreign_keys cannot be switched off: foreign keys are deferred instead, as D1 documents for a table
-- rebuild, so the rows of devices, tokens, projects, sessions and the memory tables that name a user stay valid
-- across the drop and the rename (same ids).
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`handle` text NOT NULL,
	`role` text DEFAULT 'member' NOT NULL,
	`created_at` integer NOT NULL,
	`removed_at` integer,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "users_role" CHECK(role IN ('owner','admin','member','reader'))
);
--> statement-breakpoint
INSERT INTO `__new_users`("id", "team_id", "handle", "role", "created_at", "removed_at") SELECT "id", "team_id", "handle", "role", "created_at", "removed_at" FROM `users`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
PRAGMA defer_foreign_keys = off;--> statement-breakpoint
CREATE UNIQUE INDEX `users_team_id_handle_unique` ON `users` (`team_id`,`handle`);
