import type { Caller } from './caller';
import type { AuditEntry } from './records';

/**
 * What an AGENT token may read of a batch's audit log (docs/api/settlement.md#money-controls): field agents
 * collect coffee, they do not see money. Every entry keeps its place in the chain (sequence
 * number, type, time, actor, `prev_hash`, `hash`, anchor), but its payload loses, at any depth,
 * amounts (`*amount*`, `*_ugx`, `*_usdc`, `*usd_micro*`, exchange rates, prices, principal,
 * collateral, interest, repaid, loss, fees, balances), phone numbers (`*phone*`) and transaction
 * ids (provider orders and quotes, mobile-money transactions, ledger `tx_hash`es, cash receipts).
 * Such an entry carries `payload_redacted: true`; its hash then cannot be recomputed from what is
 * shown, so the service's `verified` and `checks` — computed on the full entries before redaction —
 * are the agent's verification result.
 */
const MONEY_KEY = /amount|_ugx|_usdc|usd_micro|exchange_rate|price|principal|collateral|interest|repaid|loss|fee|balance|held/i;
const PHONE_KEY = /phone/i;
const TRANSACTION_KEY = /transaction|tx_hash|order_id|quote_id|receipt_number/i;

/** Whether a payload key is redacted for an AGENT. */
function isRedactedForAgent(key: string): boolean {
  return MONEY_KEY.test(key) || PHONE_KEY.test(key) || TRANSACTION_KEY.test(key);
}

/** The entries as `caller` may read them: unchanged for every role but AGENT (see above). */
export function auditEntriesFor(caller: Caller, entries: AuditEntry[]): AuditEntry[] {
  if (caller.role !== 'AGENT') return entries;
  return entries.map((e) => {
    const { value, removed } = strip(e.payload);
    return removed ? { ...e, payload: value as Record<string, unknown>, payload_redacted: true } : e;
  });
}

function strip(v: unknown): { value: unknown; removed: boolean } {
  if (Array.isArray(v)) {
    let removed = false;
    const value = v.map((x) => {
      const r = strip(x);
      removed ||= r.removed;
      return r.value;
    });
    return { value, removed };
  }
  if (v && typeof v === 'object') {
    let removed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (isRedactedForAgent(k)) {
        removed = true;
        continue;
      }
      const r = strip(x);
      removed ||= r.removed;
      out[k] = r.value;
    }
    return { value: out, removed };
  }
  return { value: v, removed: false };
}
