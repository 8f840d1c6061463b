// Memory-tag stripping and prompt gates (private spans, injected context, protocol chatter); pure, shared with the hooks client.

export const MEMORY_TAGS = ['private', 'cairn-context', 'system-reminder', 'system_instruction', 'system-instruction', 'persisted-output'] as const;

// The name must be followed by whitespace, '/' or '>' so that `<private-notes>` is not taken for `<private>`.
const TAG_BLOCK = new RegExp(`<(${MEMORY_TAGS.join('|')})(?=[\\s/>])[^>]*>[\\s\\S]*?</\\1\\s*>`, 'gi');

/** Removes every memory-tag block (attributes allowed, shortest match, across lines), then trims. */
export function stripMemoryTags(text: string): string {
  if (!text) return '';
  return text.replace(TAG_BLOCK, '').trim();
}

/** Same, without trimming: for values inside tool payloads, where surrounding whitespace is content. */
export function stripMemoryTagsInline(text: string): string {
  return text ? text.replace(TAG_BLOCK, '') : '';
}

/** True when the text had content and nothing is left once the memory tags are removed. */
export function isFullyPrivate(text: string): boolean {
  return text.trim() !== '' && stripMemoryTags(text) === '';
}

const TASK_NOTIFICATION_MAX_CHARS = 256 * 1024;
// Exactly one block: the body may not open or close another task-notification.
const TASK_NOTIFICATION_ONLY = /^\s*<task-notification(?:\s[^>]*)?>(?:(?!<\/?task-notification\b)[\s\S])*<\/task-notification\s*>\s*$/i;

/** True when the prompt is exactly one `<task-notification>` block: agent-framework chatter, not a user request. */
export function isTaskNotificationOnly(text: string): boolean {
  if (!text || text.length > TASK_NOTIFICATION_MAX_CHARS) return false;
  if (new TextEncoder().encode(text).length > TASK_NOTIFICATION_MAX_CHARS) return false;
  return TASK_NOTIFICATION_ONLY.test(text);
}
