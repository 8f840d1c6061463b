// Observer spend around a turn: whether the team's budget lets this turn use the LLM observer, and the D1
// record of the tokens a call used (per team, UTC day, session and model).
import { getTeamSettings } from '../db/team-settings';
import { recordObserverUsage, teamSpend } from '../db/usage';
import type { CairnEnv } from '../env';
import { budgetState, hasBudget, periodOf, type Budgets, type BudgetState } from './budget';
import type { ObserverUsage } from './types';
import { teamDb } from '../db/shards';

/**
 * The team's budget state at `now`, or null when the team set no budget (then nothing is read but the
 * settings, and not even those when the caller has them).
 */
export async function teamBudget(
  db: D1Database,
  teamId: number,
  now: number,
  known?: Budgets,
): Promise<BudgetState | null> {
  const settings = known ?? (await getTeamSettings(db, teamId));
  if (!hasBudget(settings)) return null;
  const period = periodOf(now);
  return budgetState(settings, await teamSpend(db, teamId, period.day, period.monthStart), period);
}

/** Adds one call's tokens to the team's, day's, session's and model's row. */
export async function meterCall(
  env: Pick<CairnEnv, 'DB'>,
  who: { teamId: number; sessionDbId: number },
  model: string,
  usage: ObserverUsage,
  now: number,
): Promise<void> {
  await recordObserverUsage(await teamDb(env, who.teamId), {
    teamId: who.teamId,
    sessionId: who.sessionDbId,
    day: periodOf(now).day,
    model,
    ...usage,
  });
}
