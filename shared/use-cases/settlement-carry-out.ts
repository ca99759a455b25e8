import type { Settlement } from '../domain/lending';
import type { VaultWriteQueue } from '../domain/ports/lending';
import { forEachLimited, ORDER_STEP_CONCURRENCY } from '../domain/purchase-order-limits';
import { REPAY_LOANS_CHUNK } from '../domain/vault-calls';
import { settleBatch, type BatchStepContext } from './custody';

/**
 * Carrying a settlement out (docs/api/settlement.md#settlement): its vault writes requested and its
 * batches recorded SETTLED, for an order settled on the request path and for the order worker
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches).
 */

/** The vault-write ids of a settlement (chunk `index` of its repayments, see `repaymentChunks`; its remainder). */
const repayChunkWriteId = (purchaseOrderId: string, index: number) => `${purchaseOrderId}-repays-${index}`;
const releaseWriteId = (purchaseOrderId: string) => `${purchaseOrderId}-release`;

/**
 * A settlement's repayments in chunks of REPAY_LOANS_CHUNK, by loan id: the same settlement
 * always gives the same chunks, so the vault write of chunk i (one id per chunk) is requested
 * again, never composed anew, when the settlement is carried out again.
 */
function repaymentChunks(s: Settlement): Settlement['repayments'][string][][] {
  const all = Object.values(s.repayments).sort((a, b) => (a.loan_id < b.loan_id ? -1 : a.loan_id > b.loan_id ? 1 : 0));
  const chunks: (typeof all)[] = [];
  for (let i = 0; i < all.length; i += REPAY_LOANS_CHUNK) chunks.push(all.slice(i, i + REPAY_LOANS_CHUNK));
  return chunks;
}

/**
 * Requests a settlement's vault writes: its loan repayments as REPAY_LOANS writes of at most
 * REPAY_LOANS_CHUNK loans (a chunk with nothing REQUESTED left is not asked again) and the
 * remainder's release. Idempotent: each write has one id, which the ledger writer lands once.
 */
export async function requestSettlementWrites(deps: { vaultWrites: VaultWriteQueue; now: () => Date }, s: Settlement): Promise<void> {
  const at = deps.now().toISOString();
  await forEachLimited(repaymentChunks(s), ORDER_STEP_CONCURRENCY, async (chunk, i) => {
    if (!chunk.some((r) => r.status === 'REQUESTED')) return;
    await deps.vaultWrites.request(
      repayChunkWriteId(s.purchase_order_id, i),
      {
        kind: 'REPAY_LOANS',
        ref: s.purchase_order_id,
        repayments: chunk.map((r) => ({ loanRef: r.loan_id, amountUsdMicro: BigInt(r.amount_usd_micro) })),
      },
      at,
    );
  });
  if (s.remainder_status === 'REQUESTED') {
    await deps.vaultWrites.request(
      releaseWriteId(s.purchase_order_id),
      {
        kind: 'RELEASE_REMAINDER',
        ref: s.purchase_order_id,
        cooperativeId: s.cooperative_id,
        amountUsdMicro: BigInt(s.remainder_usd_micro),
      },
      at,
    );
  }
}

/**
 * One batch of a settlement recorded SETTLED: its own conditioned write (EXPORTED → SETTLED, a
 * batch settled already is skipped), its public evidence the order, the payments' transaction
 * hashes and its loan — ids only, no amounts (served at /ipfs without a token).
 */
export async function settleOneBatch(
  deps: Parameters<typeof settleBatch>[0],
  s: Settlement,
  batchId: string,
  step: BatchStepContext = {},
): Promise<void> {
  const loan = Object.values(s.repayments).find((r) => r.batch_id === batchId);
  await settleBatch(
    deps,
    batchId,
    {
      purchase_order_id: s.purchase_order_id,
      payment_tx_hashes: (s.payments ?? [{ tx_hash: s.payment_tx_hash }]).map((x) => x.tx_hash),
      loan_id: loan?.loan_id ?? null,
    },
    step,
  );
}
