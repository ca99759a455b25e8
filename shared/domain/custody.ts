import type { Duty } from '../auth/claims';
import { STAGES, type Stage } from './records';

/**
 * Custody stages (interface-spec "Batch custody stages"; decisions §2, §8): strictly in sequence,
 * DELIVERED → GRADED → MILLED → WAREHOUSED → COMMITTED → EXPORTED → SETTLED.
 */

/** Stages a caller may set with PATCH /batch/{id}/stage; COMMITTED and SETTLED are the system's. */
export const CALLER_STAGES = ['GRADED', 'MILLED', 'WAREHOUSED', 'EXPORTED'] as const;
export type CallerStage = (typeof CALLER_STAGES)[number];

/** The cooperative duty each caller-set stage needs (decisions §2). */
export const STAGE_DUTY: Record<CallerStage, Duty> = {
  GRADED: 'QUALITY_OFFICER',
  MILLED: 'MILL_OPERATOR',
  WAREHOUSED: 'WAREHOUSE_MANAGER',
  EXPORTED: 'EXPORTER',
};

/** The stage right after `stage`, or null after SETTLED. */
export function nextStage(stage: Stage): Stage | null {
  const i = STAGES.indexOf(stage);
  return i >= 0 && i < STAGES.length - 1 ? STAGES[i + 1]! : null;
}

/** The stage right before `stage` (the one a batch must be at to move to it). */
export function previousStage(stage: Stage): Stage | null {
  const i = STAGES.indexOf(stage);
  return i > 0 ? STAGES[i - 1]! : null;
}

/** Whether `to` is exactly the next stage after `from` (no skip, no move backward). */
export function isNextStage(from: Stage, to: Stage): boolean {
  return nextStage(from) === to;
}
