// When a team's digest goes out (issue 36): its schedule from the team settings and the name of each period. Pure.
import type { TeamSettings } from '../db/team-settings';

export const DAY = 86_400_000;

/** `2026-12-04` for a daily digest; the Monday of its ISO week, `2026-W49`, for a weekly one. Pure. */
export function digestPeriod(schedule: 'daily' | 'weekly', at: number): string {
  const d = new Date(at);
  if (schedule === 'daily') return d.toISOString().slice(0, 10);
  // ISO week: the week's Thursday names its year; week 1 holds January 4th.
  const thursday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  thursday.setUTCDate(thursday.getUTCDate() - ((thursday.getUTCDay() + 6) % 7) + 3);
  const jan4 = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round(((thursday.getTime() - jan4.getTime()) / DAY - 3 + ((jan4.getUTCDay() + 6) % 7)) / 7);
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

/** The schedule a team's settings ask for, or null when it set no webhook (no digest). */
export const digestSchedule = (s: TeamSettings): 'daily' | 'weekly' | null =>
  s.digest_webhook_url ? (s.digest_schedule ?? 'daily') : null;
