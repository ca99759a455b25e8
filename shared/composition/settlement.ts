import { readMintedBatch } from '../adapters/dynamodb/batch-repo';
import type { SettlementDeps } from '../use-cases/settlement';
import { evidenceKeeping } from './evidence';
import { vaultWrites } from './deposits';
import { vaultReader } from './index';
import { ledgerWriteQueue } from './queues';
import { custodyRepo, loanRepo, now, payoutRepo, settlementRepo, webhookReceipts } from './repos';

/**
 * Settlement of purchase orders on their buyer payments (the chain-events webhook's
 * `purchase_order.paid`): the vault read back to check each payment, the stores, the vault writes
 * and the custody trail (the batches' SETTLED stage with its evidence kept and queued for pinning).
 */
export function settlementDeps(): SettlementDeps {
  return {
    receipts: webhookReceipts(),
    vault: { purchaseOrderPaymentsInTx: async (tx) => (await vaultReader()).purchaseOrderPaymentsInTx(tx) },
    custody: custodyRepo(),
    batches: { get: readMintedBatch },
    loans: loanRepo(),
    payouts: payoutRepo(),
    settlements: settlementRepo(),
    vaultWrites: vaultWrites(),
    evidence: evidenceKeeping(),
    ledgerQueue: ledgerWriteQueue(),
    now,
  };
}
