// The inbox: one file per async hook event, written by the quick entry (inbox/quick.ts) and turned into spool
// events by whoever drains it (the background sender, a synchronous hook, `cairn flush`). No node:fs here:
// names and the file format only, shared by both sides.

/** Hook events the agent does not wait for: their hook only appends to the inbox and makes sure a sender runs. */
export const QUICK_EVENTS: readonly string[] = ['post-tool-use', 'post-tool-use-failure'];

export const INBOX_DIR = 'inbox';
export const ENTRY_SUFFIX = '.hook';
export const SENDER_LOCK = 'sender.lock';
export const SENDER_SPAWNED = 'sender.spawned';
export const SENDER_LOG = 'sender.log';

/** A sender touches its lock at least this often; a lock older than SENDER_STALE_MS belongs to a dead one. */
export const SENDER_HEARTBEAT_MS = 5_000;
export const SENDER_STALE_MS = 20_000;

/** Environment a drained event is read with as if its own hook had read it (gate 0 and the skip lists). */
export const ENTRY_ENV_KEYS = ['CAIRN_EXCLUDE_PROJECTS', 'CAIRN_SKIP_TOOLS'] as const;

export interface EntryHead {
  v: 1;
  /** ms epoch when the hook ran: the event's occurred_at. */
  at: number;
  event: string;
  agent: string;
  cwd: string;
  env?: Partial<Record<(typeof ENTRY_ENV_KEYS)[number], string>>;
}

export interface Entry {
  head: EntryHead;
  /** The agent's hook payload exactly as it came on stdin (raw: redaction runs when it is drained). */
  stdin: string;
}

/**
 * `<ms, 15 digits>-<pid>-<counter>`: names sort in the order the hooks ran (to the millisecond; hooks in the
 * same millisecond are concurrent anyway), and two processes never pick the same name.
 */
export function entryName(at: number, pid: number, n = 0): string {
  return `${String(at).padStart(15, '0')}-${pid}-${n}${ENTRY_SUFFIX}`;
}

export const formatEntry = (e: Entry): string => `${JSON.stringify(e.head)}\n${e.stdin}`;

/** The entry in a file's text, or null when it is not one (a foreign or damaged file). */
export function parseEntry(text: string): Entry | null {
  const nl = text.indexOf('\n');
  if (nl < 0) return null;
  try {
    const head = JSON.parse(text.slice(0, nl)) as Partial<EntryHead>;
    if (
      head.v !== 1 ||
      typeof head.at !== 'number' ||
      typeof head.event !== 'string' ||
      typeof head.agent !== 'string' ||
      typeof head.cwd !== 'string'
    )
      return null;
    const env = head.env && typeof head.env === 'object' ? head.env : undefined;
    return {
      head: { v: 1, at: head.at, event: head.event, agent: head.agent, cwd: head.cwd, ...(env ? { env } : {}) },
      stdin: text.slice(nl + 1),
    };
  } catch {
    return null;
  }
}
