import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { PayoutRepository } from '../../shared/adapters/dynamodb/payout-repo';
import { RegistryRepository } from '../../shared/adapters/dynamodb/registry-repo';
import type { Caller } from '../../shared/domain/caller';
import { DomainError, ProviderUnavailableError, StageConflictError } from '../../shared/domain/errors';
import type { ProviderOrder } from '../../shared/domain/ports/payouts';
import type { PayoutReason, Stage } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { createFarmerPayout, type PayoutDeps } from '../../shared/use-cases/payouts';
import { api, token, waitFor, localStack } from '../support/api';
import { fakePayoutProvider, fakePayoutWorkflow } from '../unit/support/fakes';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';
import { localTableEnv } from '../../infra/local/dynamodb-local';

/**
 * Issue 9, defect 6: concurrent writers on one batch on the real DynamoDB Local of the local
 * stack. A loser must never answer 500: a stage change that lost is STAGE_OUT_OF_ORDER (422), an
 * identical payout that lost is DUPLICATE_PAYOUT (409), and there is exactly one winner.
 *
 * Two levels: through the API (20 concurrent PATCH /batch/{id}/stage, 12 concurrent
 * POST /payments/farmer-payout), and — to make the rare interleavings frequent enough to fail
 * reliably — the same writes made straight through the repositories and the payout use case,
 * many rounds, against the stack's table (RACE_ROUNDS, default 12).
 *
 * Before the fix the repository-level stage race failed in 12 of 12 rounds (1–18 losers per round
 * got TransactionConditionError on the ledger-write item), and through the API 1 of 15 rounds had a
 * 500. The payout races pass here before and after: DynamoDB Local serializes transactions and
 * never cancels one with `TransactionConflict` (every loser sees the guard's condition fail), so the
 * conflict paths real DynamoDB takes are reproduced with the SDK mocked in test/unit/races.test.ts.
 */

const ROUNDS = Number(process.env.RACE_ROUNDS ?? 12);
/** Rounds through the API (each submits and mints a batch first); RACE_HTTP_ROUNDS, default 3. */
const HTTP_ROUNDS = Number(process.env.RACE_HTTP_ROUNDS ?? 3);
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let farmer: string;

/** A submitted batch whose BatchToken is minted (stage DELIVERED). */
async function mintedBatch(): Promise<string> {
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  if (submit.status !== 201 && submit.status !== 202) throw new Error(`submit failed: ${submit.status} ${JSON.stringify(submit.body)}`);
  const batchId: string = submit.body.data?.batch_id ?? submit.body.batch_id;
  const batch = await waitFor(
    () => new BatchRepository().get(batchId),
    (b) => b?.mint_status === 'CONFIRMED',
    15_000,
  );
  if (batch?.mint_status !== 'CONFIRMED') throw new Error(`batch ${batchId} not minted: ${JSON.stringify(batch)}`);
  return batchId;
}

beforeAll(async () => {
  logger.setLogLevel('SILENT');
  const stack = localStack();
  // The repositories below talk to the stack's own DynamoDB Local and table.
  Object.assign(process.env, localTableEnv(stack.endpoints.dynamodb!), { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
  ctx = await setUpCooperative();
  farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000456');
}, 60_000);

/** What a settled promise came to: 'ok', or the error's class name / domain code. */
function outcome(r: PromiseSettledResult<unknown>): string {
  if (r.status === 'fulfilled') return 'ok';
  const e = r.reason as Error;
  if (e instanceof DomainError) return e.code;
  if (e instanceof StageConflictError) return 'StageConflictError';
  return `${e.name}: ${e.message}`;
}

function tally(xs: string[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const x of xs) t[x] = (t[x] ?? 0) + 1;
  return t;
}

describe('20 concurrent stage changes of one batch', () => {
  it(`through the custody repository: one commits, every loser is StageConflictError (${ROUNDS} stage steps)`, async () => {
    const custody = new CustodyRepository();
    const steps: Array<[Stage, Stage]> = [
      ['DELIVERED', 'GRADED'],
      ['GRADED', 'MILLED'],
      ['MILLED', 'WAREHOUSED'],
    ];
    const rounds: Array<Record<string, number>> = [];
    let batchId = '';
    for (let round = 0; round < ROUNDS; round++) {
      const [from, to] = steps[round % steps.length]!;
      if (round % steps.length === 0) batchId = await mintedBatch();
      const batch = await new BatchRepository().get(batchId);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          custody.commitStage({
            batchId,
            tokenId: batch!.token_id,
            from,
            to,
            at: new Date().toISOString(),
            actor: `racer-${i}`,
            evidenceCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
            payload: { round },
          }),
        ),
      );
      rounds.push(tally(results.map(outcome)));
    }
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => ({ ok: 1, StageConflictError: 19 })));
  }, 180_000);

  it(`through PATCH /batch/{id}/stage: one 200/202, the rest 422 STAGE_OUT_OF_ORDER, never 500 (${HTTP_ROUNDS} rounds)`, async () => {
    const grader = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['QUALITY_OFFICER'] });
    const rounds: Array<Record<string, number>> = [];
    for (let round = 0; round < HTTP_ROUNDS; round++) {
      const batchId = await mintedBatch();
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          api('PATCH', `/batch/${batchId}/stage`, {
            token: grader,
            body: {
              cooperative_id: ctx.id,
              new_stage: 'GRADED',
              evidence: { grade: 'screen18', moisture_pct: 11 },
              evidence_photo_base64: PNG,
            },
          }),
        ),
      );
      rounds.push(tally(results.map((r) => (r.status < 300 ? 'changed' : `${r.status} ${r.body.error?.code}`))));
    }
    expect(rounds).toEqual(Array.from({ length: HTTP_ROUNDS }, () => ({ changed: 1, '422 STAGE_OUT_OF_ORDER': 19 })));
  }, 180_000);
});

describe('12 concurrent identical payout creations', () => {
  it(`through createFarmerPayout on the real stores: one payout, 11 DUPLICATE_PAYOUT, never anything else (${ROUNDS} rounds)`, async () => {
    const caller: Caller = { sub: 'racer', role: 'COOPERATIVE', cooperative_id: ctx.id, duties: [] };
    let orders = 0;
    const deps: PayoutDeps = {
      registry: new RegistryRepository(),
      batches: new BatchRepository(),
      payouts: new PayoutRepository(),
      now: () => new Date(),
      provider: fakePayoutProvider({
        quote: async () => ({ quote_id: `q-${Math.random()}`, rate: '3700.25', expires_at: new Date(Date.now() + 60_000).toISOString() }),
        createOrder: async (o) => ({
          order_id: `ord-${++orders}`,
          reference: o.reference,
          status: 'PENDING',
          amount_usd_micro: o.amount_usd_micro,
          amount_ugx: 22_202,
          exchange_rate: '3700.25',
          recipient: o.recipient,
          created_at: new Date().toISOString(),
        }),
      }),
      workflow: fakePayoutWorkflow({ start: async () => {} }),
    };
    // LOAN_DISBURSEMENT payouts are made by POST /loans only (refused here); NET_COFFEE_PAYMENT is started by the stack itself.
    const reasons: PayoutReason[] = ['MANUAL', 'TOP_UP'];
    const rounds: Array<Record<string, number>> = [];
    let batchId = '';
    for (let round = 0; round < ROUNDS; round++) {
      if (round % reasons.length === 0) batchId = await mintedBatch();
      const reason = reasons[round % reasons.length]!;
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, () =>
          createFarmerPayout(deps, caller, {
            farmer_id: farmer,
            batch_id: batchId,
            cooperative_id: ctx.id,
            reason,
            amount: { usd_micro: 6_000_000 }, // MANUAL + TOP_UP of one batch stay within its value (docs/api/settlement.md#money-controls)
          }),
        ),
      );
      rounds.push(tally(results.map(outcome)));
    }
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => ({ ok: 1, DUPLICATE_PAYOUT: 11 })));
  }, 180_000);

  it(`through POST /payments/farmer-payout: one 201, eleven 409, never 500 (${HTTP_ROUNDS} rounds)`, async () => {
    const rounds: Array<Record<string, number>> = [];
    for (let round = 0; round < HTTP_ROUNDS; round++) {
      const batchId = await mintedBatch();
      const body = { farmer_id: farmer, batch_id: batchId, amount_usdc: 12.5, reason: 'MANUAL', cooperative_id: ctx.id };
      const results = await Promise.all(
        Array.from({ length: 12 }, () => api('POST', '/payments/farmer-payout', { token: ctx.coop, body })),
      );
      rounds.push(tally(results.map((r) => `${r.status}${r.status >= 400 ? ` ${r.body.error?.code}` : ''}`)));
    }
    expect(rounds).toEqual(Array.from({ length: HTTP_ROUNDS }, () => ({ 201: 1, '409 DUPLICATE_PAYOUT': 11 })));
  }, 180_000);

  it('12 concurrent retries after 503 PROVIDER_UNAVAILABLE with the order unknown: one resumes the payout, eleven DUPLICATE_PAYOUT, one provider order; a reconciliation discard of what it read before the claim is refused', async () => {
    const caller: Caller = { sub: 'retrier', role: 'COOPERATIVE', cooperative_id: ctx.id, duties: [] };
    const orders = new Map<string, ProviderOrder>();
    let providerDown = true;
    const deps: PayoutDeps = {
      registry: new RegistryRepository(),
      batches: new BatchRepository(),
      payouts: new PayoutRepository(),
      now: () => new Date(),
      provider: fakePayoutProvider({
        quote: async () => ({ quote_id: 'q-retry', rate: '3700.25', expires_at: new Date(Date.now() + 60_000).toISOString() }),
        createOrder: async (o) => {
          if (providerDown) throw new ProviderUnavailableError();
          const order = orders.get(o.reference) ?? {
            order_id: `ord-${orders.size + 1}`,
            reference: o.reference,
            status: 'PENDING' as const,
            amount_usd_micro: o.amount_usd_micro,
            amount_ugx: 22_202,
            exchange_rate: '3700.25',
            recipient: o.recipient,
            created_at: new Date().toISOString(),
          };
          orders.set(o.reference, order);
          return order;
        },
        findOrderByReference: async (ref) => {
          if (providerDown) throw new ProviderUnavailableError();
          return orders.get(ref) ?? null;
        },
      }),
      workflow: fakePayoutWorkflow({ start: async () => {} }),
    };
    const batchId = await mintedBatch();
    const input = {
      farmer_id: farmer,
      batch_id: batchId,
      cooperative_id: ctx.id,
      reason: 'MANUAL' as const,
      amount: { usd_micro: 6_000_000 },
    }; // with the TOP_UP below, within the batch's value
    const first = await createFarmerPayout(deps, caller, input).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', details: { payout_id: expect.stringMatching(/^PAY-/) } });
    const left = await deps.payouts.get((first as DomainError & { details: { payout_id: string } }).details.payout_id);
    expect(left).toMatchObject({ status: 'PENDING', order_unknown: true });

    providerDown = false;
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => createFarmerPayout(deps, caller, input)));
    expect(tally(results.map(outcome))).toEqual({ ok: 1, DUPLICATE_PAYOUT: 11 });
    expect(orders.size).toBe(1);
    const resumed = await deps.payouts.get(left!.payment_id);
    expect(resumed).toMatchObject({ status: 'PROCESSING', provider_order_id: 'ord-1' });
    expect(resumed).not.toHaveProperty('order_unknown');
    // Reconciliation that read the payout before the claim (order unknown, PENDING) cannot remove it now.
    await expect(deps.payouts.discardUnsent(left!)).rejects.toThrow();
    expect(await deps.payouts.get(left!.payment_id)).toMatchObject({ status: 'PROCESSING' });

    // The narrow window: claimed by a retry (still PENDING, its order being placed) — the stale discard is refused too.
    providerDown = true;
    const topUp = await createFarmerPayout(deps, caller, { ...input, reason: 'TOP_UP' }).catch((e: unknown) => e);
    expect(topUp).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    const [stale] = (await deps.payouts.listByBatch(batchId, 10)).items.filter((p) => p.reason === 'TOP_UP');
    await new Promise((r) => setTimeout(r, 5)); // the claim's updated_at differs from the stale read's
    const claimed = await deps.payouts.claimOrderUnknown(batchId, 'TOP_UP', new Date().toISOString());
    expect(claimed).toMatchObject({ payment_id: stale!.payment_id, status: 'PENDING' });
    expect(await deps.payouts.claimOrderUnknown(batchId, 'TOP_UP', new Date().toISOString())).toBeNull(); // one claimer
    await expect(deps.payouts.discardUnsent(stale!)).rejects.toThrow();
    expect(await deps.payouts.get(stale!.payment_id)).toMatchObject({ status: 'PENDING' });
  }, 60_000);
});
