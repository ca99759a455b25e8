import type { CustodyStore } from '../domain/ports/batches';
import type { PayoutStore } from '../domain/ports/payouts';
import { metrics, type MetricsRecorder } from '../runtime/metrics';

/**
 * Business metrics counted where the facts become durable: around the stores' conditional writes,
 * so each transition is counted once however many use cases (creation, state-machine tasks, the
 * provider's webhook, reconciliation) lead to it, and a replayed or losing write counts nothing.
 */

const elapsedMs = (from: string, to: string) => Date.parse(to) - Date.parse(from);

/**
 * A PayoutStore that counts what it applied: PayoutsCreated (createPending succeeded),
 * PayoutsCompleted and PayoutTimeToCompleted (recordSettlement APPLIED; ms from the payout's
 * `created_at` to the settlement's record time), PayoutsFailed (recordFailure APPLIED, or the
 * first order rejected), ManualReviews (markManualReview moved it). Every other method passes through.
 */
export function meteredPayoutStore<S extends Partial<PayoutStore>>(store: S, m: MetricsRecorder = metrics): S {
  const counting: Partial<PayoutStore> = {
    createPending: async (payout, expectedSeq, limits) => {
      await store.createPending!(payout, expectedSeq, limits);
      m.count('PayoutsCreated');
    },
    recordSettlement: async (payout, s, at, webhook) => {
      const outcome = await store.recordSettlement!(payout, s, at, webhook);
      if (outcome === 'APPLIED') {
        m.count('PayoutsCompleted');
        m.timing('PayoutTimeToCompleted', elapsedMs(payout.created_at, at));
      }
      return outcome;
    },
    recordFailure: async (payout, attempt, reason, at, webhook) => {
      const outcome = await store.recordFailure!(payout, attempt, reason, at, webhook);
      if (outcome === 'APPLIED') m.count('PayoutsFailed');
      return outcome;
    },
    markFirstOrderRejected: async (payout, reason, at) => {
      const failed = await store.markFirstOrderRejected!(payout, reason, at);
      m.count('PayoutsFailed');
      return failed;
    },
    markManualReview: async (payout, at) => {
      const moved = await store.markManualReview!(payout, at);
      if (moved) m.count('ManualReviews');
      return moved;
    },
  };
  return new Proxy(store, {
    get: (target, prop, receiver) => {
      if (typeof prop === 'string' && prop in counting && typeof (target as Record<string, unknown>)[prop] === 'function')
        return counting[prop as keyof PayoutStore];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The ledger writer's custody store, timing each confirmation: LedgerWriteLag = ms from the
 * write's commit (`created_at`, stored with its cause) to its mined confirmation.
 */
export function meteredLedgerConfirm<C extends Pick<CustodyStore, 'confirm'>>(custody: C, m: MetricsRecorder = metrics): C {
  return new Proxy(custody, {
    get: (target, prop, receiver) => {
      if (prop === 'confirm') {
        return async (...args: Parameters<CustodyStore['confirm']>) => {
          await target.confirm(...args);
          const [tx, , , at] = args;
          m.timing('LedgerWriteLag', elapsedMs(tx.created_at, at));
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
