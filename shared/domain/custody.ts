import type { Duty } from './caller';
import { STAGES, type Stage } from './records';

/**
 * Custody stages (docs/api/batches-and-custody.md#custody-trail; docs/security.md#tokens-and-roles, docs/api/batches-and-custody.md#custody-trail): strictly in sequence,
 * DELIVERED → GRADED → MILLED → WAREHOUSED → COMMITTED → EXPORTED → SETTLED.
 */

/** Stages a caller may set with PATCH /batch/{id}/stage; COMMITTED and SETTLED are the system's. */
export const CALLER_STAGES = ['GRADED', 'MILLED', 'WAREHOUSED', 'EXPORTED'] as const;
export type CallerStage = (typeof CALLER_STAGES)[number];

/** The cooperative duty each caller-set stage needs (docs/security.md#tokens-and-roles). */
export const STAGE_DUTY: Record<CallerStage, Duty> = {
  GRADED: 'QUALITY_OFFICER',
  MILLED: 'MILL_OPERATOR',
  WAREHOUSED: 'WAREHOUSE_MANAGER',
  EXPORTED: 'EXPORTER',
};

/** The stage right after `stage`, or null after SETTLED. */
function nextStage(stage: Stage): Stage | null {
  const i = STAGES.indexOf(stage);
  return i >= 0 && i < STAGES.length - 1 ? STAGES[i + 1]! : null;
}

/** Whether `to` is exactly the next stage after `from` (no skip, no move backward). */
export function isNextStage(from: Stage, to: Stage): boolean {
  return nextStage(from) === to;
}

/** Stages at or after GRADED make a batch DDS-eligible (docs/api/batches-and-custody.md#custody-trail 7). */
export function isDdsEligible(stage: Stage | null): boolean {
  return stage !== null && STAGES.indexOf(stage) >= STAGES.indexOf('GRADED');
}

/** Stage name → the `uint8` code TraceLog records (see TraceLog.sol). */
export const STAGE_CODES = {
  DELIVERED: 0,
  GRADED: 1,
  MILLED: 2,
  WAREHOUSED: 3,
  COMMITTED: 4,
  EXPORTED: 5,
  SETTLED: 6,
} as const;
