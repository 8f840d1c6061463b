// One step's context and what it cost. The step runs inside one metered invocation (src/db/meter.ts), so its
// D1 statements and other subrequests are counted where they are sent; `fits` compares those counts (and time,
// bytes) with the step's budget before each unit of work.
import { currentUsage, spent } from '../db/meter';
import type { CairnEnv } from '../env';
import type { StepBudget, StepContext, UnitCost } from './types';

/** What one step used, kept per job (max and total) and reported with it. */
export interface StepCost {
  /** D1 statements. */
  statements: number;
  /** Every subrequest, D1 statements included. */
  subrequests: number;
  ms: number;
  held: number;
  rowsRead: number;
  rowsWritten: number;
  /** Whole-index FTS commands the step sent (must stay empty: tests fail on any). */
  wholeIndex: string[];
}

/**
 * The longest pause `breathe` takes. Measured (bench/move-bystander): the embed job a move starts ran its
 * chunks back to back and another team's context answered in 4.0 s, each of its statements waiting behind one
 * chunk; a pause per unit bounds that, and a cap keeps a long job from doubling its time.
 */
export const PACE_MAX_MS = 60;

export interface MeasuredContext extends StepContext {
  cost(): StepCost;
}

export function stepContext(init: {
  env: CairnEnv;
  jobId: string;
  teamId: number | null;
  actorUserId: number | null;
  budget: StepBudget;
  clock?: () => number;
  /** The longest pause `breathe` takes (0: never pause, for a step run inside a request). */
  paceMaxMs?: number;
}): MeasuredContext {
  const clock = init.clock ?? Date.now;
  const started = clock();
  const paceMax = init.paceMaxMs ?? PACE_MAX_MS;
  let breathed = started;
  let units = 0;
  let held = 0;
  const usage = () => currentUsage();
  const used = () => {
    const u = usage();
    return { statements: u?.statements ?? 0, subrequests: u ? spent(u) : 0, ms: clock() - started };
  };
  return {
    env: init.env,
    jobId: init.jobId,
    teamId: init.teamId,
    actorUserId: init.actorUserId,
    now: started,
    budget: init.budget,
    fits(cost: UnitCost) {
      const u = used();
      const ok =
        units === 0 ||
        (u.statements + cost.statements <= init.budget.statements &&
          u.subrequests + cost.statements + (cost.subrequests ?? 0) <= init.budget.subrequests &&
          (cost.bytes ?? 0) <= init.budget.bytes &&
          u.ms < init.budget.ms);
      if (ok) units++;
      return ok;
    },
    used,
    holding(bytes: number) {
      held = Math.max(held, bytes);
    },
    async breathe() {
      const pause = Math.min(paceMax, clock() - breathed);
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      breathed = clock();
    },
    cost() {
      const u = usage();
      return {
        ...used(),
        held,
        rowsRead: u?.rowsRead ?? 0,
        rowsWritten: u?.rowsWritten ?? 0,
        wholeIndex: [...(u?.wholeIndex ?? [])],
      };
    },
  };
}
