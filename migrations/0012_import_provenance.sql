ALTER TABLE `observations` ADD `imported_author` text;--> statement-breakpoint
ALTER TABLE `prompts` ADD `imported_author` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `imported_at` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `imported_author` text;--> statement-breakpoint
ALTER TABLE `summaries` ADD `imported_author` text;