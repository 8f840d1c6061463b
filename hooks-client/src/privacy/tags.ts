// Memory tags: spans the user marked private and text cairn or Claude Code injected never leave the machine.

export const MEMORY_TAGS = ['private', 'cairn-context', 'system-reminder', 'system_instruction', 'system-instruction', 'persisted-output'] as const;

// Non-greedy and not nesting-aware: an outer block is removed whole because its closing tag comes first
// for the outer name (inner tags have other names, or are removed by an earlier match).
const TAG_RE = new RegExp(`<(${MEMORY_TAGS.join('|')})\\b[^>]*>[\\s\\S]*?</\\1\\s*>`, 'g');

/** Removes every memory-tagged span and trims the result. */
export function stripMemoryTags(text: string): string {
  if (!text.includes('<')) return text.trim();
  return text.replace(TAG_RE, '').trim();
}

/** Same, but keeps surrounding whitespace: for values inside tool payloads, where spacing is content. */
export function stripMemoryTagsInline(text: string): string {
  return text.includes('<') ? text.replace(TAG_RE, '') : text;
}

const MAX_PROTOCOL_BYTES = 256 * 1024;
const TASK_NOTIFICATION_ONLY = /^\s*<task-notification\b[^>]*>[\s\S]*?<\/task-notification\s*>\s*$/;

/** A prompt that is only Claude Code's own `<task-notification>` block, not something the user typed. */
export function isTaskNotificationOnly(prompt: string): boolean {
  if (!prompt || prompt.length > MAX_PROTOCOL_BYTES) return false;
  const m = TASK_NOTIFICATION_ONLY.exec(prompt);
  if (!m) return false;
  // Two blocks ("<a>…</a><a>…</a>") also match the lazy pattern; exactly one block is required.
  return (prompt.match(/<task-notification\b/g) ?? []).length === 1;
}
