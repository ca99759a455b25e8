import type { BuyerPayment, Settlement } from '../../../shared/domain/lending';
import type { SettlementStore } from '../../../shared/domain/ports/lending';
import type { PurchaseOrder } from '../../../shared/domain/records';

/**
 * An in-memory SettlementStore with the repository's rules: a payment kept once per log; a COUNTED
 * one adds to the order's `paid_usd_micro` only while the order is CONFIRMED and not settled
 * (else kept UNAPPLIED, AFTER_SETTLEMENT); a settlement created once, only while the counted sum
 * is its amount, setting the order's `settled_at`; an ADMIN's settle request kept on a confirmed,
 * unsettled order (the first one stays); a large order's settled-batch count moved only from the
 * count a step started at; refunds UNAPPLIED|REFUND_REFUSED → REQUESTED → REFUNDED.
 */
export function memorySettlementStore(orders: Map<string, PurchaseOrder>) {
  let stored: Settlement | null = null;
  const payments = new Map<string, BuyerPayment>();
  const audits: Array<[string, string[]]> = [];
  const key = (po: string, tx: string, i: number) => `${po}|${tx.toLowerCase()}|${i}`;
  const store: SettlementStore = {
    start: async (s, batchIds) => {
      const po = orders.get(s.purchase_order_id);
      if (stored || !po || po.settled_at || (po.paid_usd_micro ?? 0) !== s.amount_usd_micro) return false;
      stored = s;
      orders.set(po.purchase_order_id, { ...po, settled_at: s.created_at });
      audits.push(['SETTLEMENT_STARTED', batchIds]);
      return true;
    },
    completeOrderAudits: async () => undefined,
    markWritesRequested: async () => {
      if (stored) stored = { ...stored, writes_requested: true };
    },
    claimRun: async (_id, runId, now, until) => {
      if (!stored || (stored.run_until && stored.run_until >= now && stored.run_id !== runId)) return false;
      stored = { ...stored, run_id: runId, run_until: until };
      return true;
    },
    releaseRun: async (_id, runId) => {
      if (stored?.run_id === runId) {
        const { run_id: _r, run_until: _u, ...rest } = stored;
        stored = rest;
      }
    },
    recordSettledProgress: async (_id, from, to) => {
      if (!stored || (stored.settled_batch_count ?? 0) !== from) return false;
      stored = { ...stored, settled_batch_count: to };
      return true;
    },
    get: async () => stored,
    recordRepayment: async () => undefined,
    recordRemainder: async () => undefined,
    recordPayment: async (p, batchIds) => {
      const k = key(p.purchase_order_id, p.tx_hash, p.log_index);
      if (payments.has(k)) return { payment: payments.get(k)!, created: false };
      const po = orders.get(p.purchase_order_id);
      if (p.status === 'COUNTED' && (po?.status !== 'CONFIRMED' || po.settled_at))
        p = { ...p, status: 'UNAPPLIED', unapplied_reason: 'AFTER_SETTLEMENT' };
      if (p.status === 'COUNTED')
        orders.set(po!.purchase_order_id, { ...po!, paid_usd_micro: (po!.paid_usd_micro ?? 0) + p.amount_usd_micro });
      payments.set(k, p);
      audits.push(['BUYER_PAYMENT_RECEIVED', batchIds]);
      return { payment: p, created: true };
    },
    payments: async (poId) => [...payments.values()].filter((p) => p.purchase_order_id === poId),
    getPayment: async (poId, tx, i) => payments.get(key(poId, tx, i)) ?? null,
    requestSettlement: async (poId, request) => {
      const po = orders.get(poId);
      if (po?.status !== 'CONFIRMED' || po.settled_at) return false;
      orders.set(poId, { ...po, settle_request: po.settle_request ?? request });
      return true;
    },
    recordAmountDue: async (poId, due) => {
      const po = orders.get(poId);
      if (po && po.amount_due_usd_micro === undefined) orders.set(poId, { ...po, amount_due_usd_micro: due });
    },
    requestRefund: async (p, refund, batchIds) => {
      const k = key(p.purchase_order_id, p.tx_hash, p.log_index);
      const now = payments.get(k);
      if (!now || (now.status !== 'UNAPPLIED' && now.status !== 'REFUND_REFUSED')) return false;
      payments.set(k, { ...now, status: 'REFUND_REQUESTED', ...refund });
      audits.push(['PAYMENT_REFUND_REQUESTED', batchIds]);
      return true;
    },
    recordRefund: async (poId, tx, i, outcome) => {
      const k = key(poId, tx, i);
      const now = payments.get(k);
      if (now?.status === 'REFUND_REQUESTED')
        payments.set(k, { ...now, status: outcome.status, ...(outcome.tx_hash ? { refund_tx_hash: outcome.tx_hash } : {}) });
    },
  };
  return { store, audits, settlement: () => stored, payments };
}
