-- Branch and HEAD commit of each session and observation, as the hooks client read them. NULL is unknown (older rows and clients), neutral in the context index.
ALTER TABLE `observations` ADD `git_branch` text;--> statement-breakpoint
ALTER TABLE `observations` ADD `git_commit` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `git_branch` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `git_commit` text;