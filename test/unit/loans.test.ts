import type { Caller } from '../../shared/domain/caller';
import { DomainError } from '../../shared/domain/errors';
import {
  collateralValueUsdMicro,
  interestDays,
  interestUsdMicro,
  ltvBps,
  maxLoanUsdMicro,
  repaymentDueUsdMicro,
  type Loan,
} from '../../shared/domain/lending';
import type { PriceFeedSnapshot } from '../../shared/domain/lending';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { LoanStore } from '../../shared/domain/ports/lending';
import type { PayoutRequestMessage } from '../../shared/domain/ports/payouts';
import type { VaultCall } from '../../shared/domain/vault-calls';
import type { VaultLedgerTx } from '../../shared/domain/records';
import { toErrorResponse } from '../../shared/http/handler';
import { loanAsOf } from '../../shared/domain/lending';
import {
  collateralLockHandler,
  createLoan,
  loanWriteOffHandler,
  readBatchLoan,
  readLoan,
  reconcileLoans,
  writeOffDefaultedLoans,
  writeOffWriteId,
  type LoanDeps,
} from '../../shared/use-cases/loans';
import {
  daysPastDue,
  DEFAULT_LOAN_TERM_DAYS,
  isWriteOffDue,
  loanDueAt,
  loanTermDays,
  microShares,
  par30UsdMicro,
  sharePriceUsdc,
} from '../../shared/domain/loan-terms';
import { createFarmerPayout } from '../../shared/use-cases/payouts';
import { coop } from './support/api-event';
import {
  aBatch,
  aFarmer,
  aPayout,
  fakeBatchStore,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  fakeWorkQueue,
} from './support/fakes';

/**
 * Loan origination and reads (docs/api/lending.md#loans) with in-memory stores: every rule of POST
 * /loans, the loan-to-value and interest arithmetic, and what happens when the collateral lock is
 * mined or refused. The batch: 240.75 kg of screen18; at 6.20 USD/kg its collateral is worth
 * 1,492.65 USDC, so the largest loan is 895.59 USDC.
 */

const NOW = new Date('2026-11-22T10:00:00.000Z');
const manager: Caller = { ...coop('COOP-1'), duties: ['MANAGER'] };
const feed = (over: Partial<PriceFeedSnapshot> = {}): PriceFeedSnapshot => ({
  updated_at: '2026-11-22T09:30:00.000Z',
  source: 'test',
  usd_micro_per_kg: { screen18: 6_200_000, screen15: 5_800_000, FAQ: 5_100_000, PB: 6_000_000 },
  ...over,
});

/** An in-memory LoanStore with the one-loan-per-batch guard, and what the loan creation stored and queued. */
function world(opts: { batch?: Parameters<typeof aBatch>[0]; prices?: PriceFeedSnapshot | Error } = {}) {
  const loans = new Map<string, Loan>();
  const guards = new Map<string, string>();
  const lockWrites: VaultLedgerTx[] = [];
  const sent: LedgerWriteMessage[] = [];
  let counter = 0;
  const store: LoanStore = {
    async createPending(loan, lock) {
      if (guards.has(loan.batch_id)) throw new DomainError('BATCH_HAS_ACTIVE_LOAN', 'guard exists');
      guards.set(loan.batch_id, loan.loan_id);
      loans.set(loan.loan_id, { ...loan });
      lockWrites.push(lock);
    },
    nextLoanNumber: async () => ++counter,
    get: async (id) => (loans.has(id) ? { ...loans.get(id)! } : null),
    activeForBatch: async (batchId) => (guards.has(batchId) ? { ...loans.get(guards.get(batchId)!)! } : null),
    activeForBatches: async (ids) => ids.map((b) => (guards.has(b) ? { ...loans.get(guards.get(b)!)! } : null)),
    async transition(id, from, to, set, at) {
      const cur = loans.get(id);
      if (!cur || !from.includes(cur.status)) return false;
      loans.set(id, { ...cur, ...set, status: to, updated_at: at });
      if (to === 'REPAID' || to === 'CANCELLED') guards.delete(cur.batch_id);
      return true;
    },
    listByFarmer: async () => [...loans.values()],
    pendingBefore: async (before) =>
      [...loans.values()].filter((l) => l.status === 'PENDING' && l.created_at < before).map((l) => ({ ...l })),
    activeDueBy: async (by) =>
      [...loans.values()].filter((l) => l.status === 'ACTIVE' && l.due_at !== undefined && l.due_at <= by).map((l) => ({ ...l })),
  };
  const deps: LoanDeps = {
    registry: fakeRegistryStore({ getFarmer: async (id) => (id === 'F-1' ? aFarmer() : null) }),
    batches: fakeBatchStore({ get: async (id) => (id === 'BATCH-2026-000001' ? aBatch(opts.batch) : null) }),
    loans: store,
    payouts: fakePayoutStore({ get: async () => null }),
    prices: {
      latest: async () => {
        if (opts.prices instanceof Error) throw opts.prices;
        return opts.prices ?? feed();
      },
    },
    ledgerQueue: fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', {
      send: async (m) => {
        sent.push(m);
      },
    }),
    apr: '0.12',
    termDays: 180,
    now: () => NOW,
  };
  return { deps, loans, guards, lockWrites, sent };
}

const ask = (w: ReturnType<typeof world>, amount_usd_micro: number, caller: Caller = manager) =>
  createLoan(w.deps, caller, { batch_id: 'BATCH-2026-000001', amount_usd_micro });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof DomainError ? `${toErrorResponse(e, 'r').statusCode} ${e.code}` : String(e)),
  );

describe('lending arithmetic (docs/api/lending.md#loans)', () => {
  it('collateral = weight × price, 60 % loan-to-value, exact in micro-USDC', () => {
    expect(collateralValueUsdMicro(240.75, 6_200_000)).toBe(1_492_650_000);
    expect(maxLoanUsdMicro(1_492_650_000)).toBe(895_590_000);
    expect(ltvBps(895_590_000, 1_492_650_000)).toBe(6_000);
    expect(ltvBps(895_590_001, 1_492_650_000)).toBe(6_001); // rounded up: never understated
  });

  it('simple interest per started day at the annual rate, rounded up', () => {
    expect(interestDays('2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z')).toBe(1);
    expect(interestDays('2026-01-01T00:00:00Z', '2026-01-31T00:00:00Z')).toBe(30);
    expect(interestDays('2026-01-01T00:00:00Z', '2026-01-31T00:00:01Z')).toBe(31);
    // 500 USDC × 0.12 × 30 / 365 = 4.931506… USDC
    expect(interestUsdMicro(500_000_000, '0.12', 30)).toBe(4_931_507);
    expect(
      repaymentDueUsdMicro(
        { principal_usd_micro: 500_000_000, apr: '0.12', disbursed_at: '2026-01-01T00:00:00Z', created_at: '2025-12-31T00:00:00Z' },
        '2026-01-31T00:00:00Z',
      ),
    ).toBe(504_931_507);
    expect(() => interestUsdMicro(1, '12%', 1)).toThrow(RangeError);
  });
});

describe('POST /loans rules', () => {
  it('creates a PENDING loan with its figures and the ledger write that locks the token; no money moves yet', async () => {
    const w = world();
    const loan = await ask(w, 500_000_000);
    expect(loan).toMatchObject({
      loan_id: 'LOAN-2026-000001',
      status: 'PENDING',
      principal_usd_micro: 500_000_000,
      collateral_value_usd_micro: 1_492_650_000,
      ltv_bps: 3_350,
      price_usd_micro_per_kg: 6_200_000,
      price_updated_at: '2026-11-22T09:30:00.000Z',
      apr: '0.12',
      disbursement_payment_id: 'DISB-2026-000001',
      token_id: aBatch().token_id,
      farmer_id: 'F-1',
      cooperative_id: 'COOP-1',
      due_at: '2027-05-21T10:00:00.000Z', // created 2026-11-22T10:00Z + LOAN_TERM_DAYS 180
    });
    expect(w.lockWrites).toEqual([
      expect.objectContaining({
        ledger_tx_id: 'LOAN-2026-000001-lock',
        kind: 'VAULT',
        status: 'PENDING',
        vault_call: { kind: 'LOCK_COLLATERAL', ref: 'LOAN-2026-000001', tokenId: aBatch().token_id, principalUsdMicro: '500000000' },
      }),
    ]);
    expect(w.sent).toEqual([{ ledger_tx_id: 'LOAN-2026-000001-lock' }]);
  });

  it('exactly 60 % is allowed; one micro-USDC more is INSUFFICIENT_COLLATERAL with the figures', async () => {
    expect((await ask(world(), 895_590_000)).ltv_bps).toBe(6_000);
    const err = await ask(world(), 895_590_001).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INSUFFICIENT_COLLATERAL',
      details: { collateral_value_usdc: 1492.65, max_loan_usdc: 895.59, requested_usdc: 895.590001 },
    });
    expect(toErrorResponse(err, 'r').statusCode).toBe(422);
  });

  it('below the 50 USDC minimum, or collateral that cannot support it: 422 INSUFFICIENT_COLLATERAL', async () => {
    expect(await codeOf(ask(world(), 49_999_999))).toBe('422 INSUFFICIENT_COLLATERAL');
    expect(await codeOf(ask(world(), 50_000_000))).toBe('ok');
    // 10 kg × 6.20 = 62 USDC → 37.20 USDC at most: below the minimum whatever is asked
    expect(await codeOf(ask(world({ batch: { weight_kg: 10 } }), 50_000_000))).toBe('422 INSUFFICIENT_COLLATERAL');
  });

  it('a price feed older than 1 hour, or unreadable, pauses origination: 503 STALE_PRICE_FEED', async () => {
    expect(await codeOf(ask(world({ prices: feed({ updated_at: '2026-11-22T08:59:59.000Z' }) }), 100_000_000))).toBe(
      '503 STALE_PRICE_FEED',
    );
    expect(await codeOf(ask(world({ prices: new Error('connect ECONNREFUSED') }), 100_000_000))).toBe('503 STALE_PRICE_FEED');
    expect(await codeOf(ask(world({ prices: feed({ updated_at: '2026-11-22T09:00:01.000Z' }) }), 100_000_000))).toBe('ok');
  });

  it('one active loan per batch: 409 BATCH_HAS_ACTIVE_LOAN; after the loan is cancelled a new one may be made', async () => {
    const w = world();
    const first = await ask(w, 100_000_000);
    expect(await codeOf(ask(w, 100_000_000))).toBe('409 BATCH_HAS_ACTIVE_LOAN');
    await collateralLockHandler({ loans: w.deps.loans, payoutQueue: fakeWorkQueue('payouts'), now: () => NOW }).refused(
      { kind: 'LOCK_COLLATERAL', ref: first.loan_id, tokenId: first.token_id, principalUsdMicro: '100000000' },
      'TokenLocked',
    );
    expect(w.loans.get(first.loan_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'TokenLocked' });
    expect((await ask(w, 100_000_000)).loan_id).toBe('LOAN-2026-000002');
  });

  it('batch state: SETTLED, not minted, unknown → 422 BATCH_NOT_ELIGIBLE / 404 BATCH_NOT_FOUND', async () => {
    expect(await codeOf(ask(world({ batch: { stage: 'SETTLED' } }), 100_000_000))).toBe('422 BATCH_NOT_ELIGIBLE');
    expect(await codeOf(ask(world({ batch: { mint_status: 'PENDING', stage: null } }), 100_000_000))).toBe('422 BATCH_NOT_ELIGIBLE');
    expect(await codeOf(createLoan(world().deps, manager, { batch_id: 'BATCH-2026-000999', amount_usd_micro: 100_000_000 }))).toBe(
      '404 BATCH_NOT_FOUND',
    );
  });

  it('who may lend: ADMIN and a COOPERATIVE MANAGER of the batch; others 403', async () => {
    expect(await codeOf(ask(world(), 100_000_000, { sub: 'admin', role: 'ADMIN', duties: [] }))).toBe('ok');
    expect(await codeOf(ask(world(), 100_000_000, { ...coop('COOP-1'), duties: ['EXPORTER'] }))).toBe('403 INSUFFICIENT_PERMISSIONS');
    expect(await codeOf(ask(world(), 100_000_000, { ...coop('COOP-2'), duties: ['MANAGER'] }))).toBe('403 INSUFFICIENT_PERMISSIONS');
    expect(await codeOf(ask(world(), 100_000_000, { sub: 'a', role: 'AGENT', cooperative_id: 'COOP-1', duties: [] }))).toBe(
      '403 INSUFFICIENT_PERMISSIONS',
    );
    expect(await codeOf(ask(world(), 100_000_000, { sub: 'm', role: 'MFI', mfi_id: 'MFI-1', duties: [] }))).toBe(
      '403 INSUFFICIENT_PERMISSIONS',
    );
  });

  it('a farmer without a phone: 422 PHONE_NOT_FOUND (the loan could not be paid out)', async () => {
    const w = world();
    w.deps.registry = fakeRegistryStore({ getFarmer: async () => aFarmer({ phone: undefined }) });
    expect(await codeOf(ask(w, 100_000_000))).toBe('422 PHONE_NOT_FOUND');
  });
});

describe('after the lock, reads', () => {
  it('lock mined → lock_tx_hash recorded and the disbursement requested; a second delivery requests it again harmlessly', async () => {
    const w = world();
    const loan = await ask(w, 100_000_000);
    const requested: PayoutRequestMessage[] = [];
    const handler = collateralLockHandler({
      loans: w.deps.loans,
      payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payouts', {
        send: async (m) => {
          requested.push(m);
        },
      }),
      now: () => NOW,
    });
    const call = { kind: 'LOCK_COLLATERAL' as const, ref: loan.loan_id, tokenId: loan.token_id, principalUsdMicro: '100000000' };
    await handler.mined(call, '0xlock', null);
    await handler.mined(call, '0xlock', null);
    expect(w.loans.get(loan.loan_id)).toMatchObject({ status: 'PENDING', lock_tx_hash: '0xlock' });
    expect(requested).toEqual([{ loan_id: loan.loan_id }, { loan_id: loan.loan_id }]);
  });

  it('a loan is ACTIVE once its disbursement settles (or sits in manual review), PENDING before', () => {
    const loan = { status: 'PENDING' } as Pick<Loan, 'status'> as Loan;
    expect(loanAsOf(loan, null).status).toBe('PENDING');
    expect(loanAsOf(loan, aPayout({ status: 'PROCESSING' })).status).toBe('PENDING');
    expect(loanAsOf(loan, aPayout({ status: 'COMPLETED', completed_at: '2026-11-22T10:05:00.000Z' }))).toMatchObject({
      status: 'ACTIVE',
      disbursed_at: '2026-11-22T10:05:00.000Z',
    });
    expect(loanAsOf(loan, aPayout({ status: 'MANUAL_REVIEW', updated_at: '2026-11-22T11:00:00.000Z' }))).toMatchObject({
      status: 'ACTIVE',
      disbursed_at: '2026-11-22T11:00:00.000Z',
    });
  });

  it('GET /loans/{id} and GET /batch/{id}/loan: 404 LOAN_NOT_FOUND, and another cooperative 403; MFI may read', async () => {
    const w = world();
    expect(await codeOf(readLoan(w.deps, manager, 'LOAN-2026-000042'))).toBe('404 LOAN_NOT_FOUND');
    expect(await codeOf(readBatchLoan(w.deps, manager, 'BATCH-2026-000001'))).toBe('404 LOAN_NOT_FOUND');
    const loan = await ask(w, 100_000_000);
    expect((await readBatchLoan(w.deps, manager, 'BATCH-2026-000001')).loan_id).toBe(loan.loan_id);
    expect(await codeOf(readLoan(w.deps, { sub: 'm', role: 'MFI', mfi_id: 'MFI-1', duties: [] }, loan.loan_id))).toBe('ok');
    expect(await codeOf(readLoan(w.deps, coop('COOP-2'), loan.loan_id))).toBe('403 INSUFFICIENT_PERMISSIONS');
    expect(await codeOf(readBatchLoan(w.deps, coop('COOP-2'), 'BATCH-2026-000001'))).toBe('403 INSUFFICIENT_PERMISSIONS');
  });
});

describe('POST /payments/farmer-payout with reason LOAN_DISBURSEMENT', () => {
  it('is refused (400) with a message pointing to POST /loans; nothing is quoted or created', async () => {
    const deps = {
      registry: fakeRegistryStore(),
      batches: fakeBatchStore(),
      payouts: fakePayoutStore(),
      provider: fakePayoutProvider(),
      workflow: fakePayoutWorkflow(),
      now: () => NOW,
    };
    const err = await createFarmerPayout(deps, coop('COOP-1'), {
      farmer_id: 'F-1',
      batch_id: 'BATCH-2026-000001',
      cooperative_id: 'COOP-1',
      reason: 'LOAN_DISBURSEMENT',
      amount: { usd_micro: 1_000_000 },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((err as Error).message).toContain('POST /loans');
  });
});

describe('reconcileLoans (with the payout reconciler)', () => {
  it('stores a PENDING loan ACTIVE once its disbursement settled, and re-requests a lost disbursement of a locked loan; leaves an unlocked one', async () => {
    const w = world();
    const settled = await ask(w, 100_000_000);
    w.loans.set(settled.loan_id, { ...w.loans.get(settled.loan_id)!, lock_tx_hash: '0xlock1' });
    const lost = await createLoan(
      { ...w.deps, batches: fakeBatchStore({ get: async () => aBatch({ batch_id: 'BATCH-2026-000002' }) }) },
      manager,
      { batch_id: 'BATCH-2026-000002', amount_usd_micro: 100_000_000 },
    );
    w.loans.set(lost.loan_id, { ...w.loans.get(lost.loan_id)!, lock_tx_hash: '0xlock2' });
    const unlocked = await createLoan(
      { ...w.deps, batches: fakeBatchStore({ get: async () => aBatch({ batch_id: 'BATCH-2026-000003' }) }) },
      manager,
      { batch_id: 'BATCH-2026-000003', amount_usd_micro: 100_000_000 },
    );

    const requested: PayoutRequestMessage[] = [];
    const later = new Date(NOW.getTime() + 600_000);
    const report = await reconcileLoans(
      {
        loans: w.deps.loans,
        payouts: fakePayoutStore({
          get: async (id) =>
            id === settled.disbursement_payment_id
              ? aPayout({ payment_id: id, status: 'COMPLETED', completed_at: '2026-11-22T10:01:00.000Z' })
              : null,
        }),
        startDisbursement: async (loanId) => {
          requested.push({ loan_id: loanId });
        },
        now: () => later,
      },
      { staleAfterSeconds: 300 },
    );
    expect(report).toEqual({ examined: 3, activated: 1, disbursementsRequested: 1 });
    expect(w.loans.get(settled.loan_id)).toMatchObject({ status: 'ACTIVE', disbursed_at: '2026-11-22T10:01:00.000Z' });
    expect(requested).toEqual([{ loan_id: lost.loan_id }]);
    expect(w.loans.get(unlocked.loan_id)!.status).toBe('PENDING');
  });
});

describe('loan terms: due date, PAR30 and default (docs/api/lending.md#loans)', () => {
  const DAY = 86_400_000;
  const due = '2027-05-21T10:00:00.000Z';
  const at = (days: number, extraMs = 0) => new Date(Date.parse(due) + days * DAY + extraMs);

  it('a loan is due LOAN_TERM_DAYS after its creation (default 180); the setting must be whole days 1–3650', () => {
    expect(loanDueAt('2026-11-22T10:00:00.000Z', 180)).toBe(due);
    expect(loanTermDays(undefined)).toBe(DEFAULT_LOAN_TERM_DAYS);
    expect(loanTermDays('')).toBe(180);
    expect(loanTermDays(' 30 ')).toBe(30);
    for (const bad of ['0', '-1', '1.5', 'ninety', '3651']) expect(() => loanTermDays(bad)).toThrow(RangeError);
  });

  it('days past due count whole days after the due instant', () => {
    expect(daysPastDue(due, at(-3))).toBe(0);
    expect(daysPastDue(due, at(0))).toBe(0);
    expect(daysPastDue(due, at(1, -1))).toBe(0);
    expect(daysPastDue(due, at(1))).toBe(1);
    expect(daysPastDue(due, at(90))).toBe(90);
  });

  it('an ACTIVE loan defaults 90 days after due_at, not a millisecond before; other statuses and loans without a due date never', () => {
    expect(isWriteOffDue({ status: 'ACTIVE', due_at: due }, at(90, -1))).toBe(false);
    expect(isWriteOffDue({ status: 'ACTIVE', due_at: due }, at(90))).toBe(true);
    for (const status of ['PENDING', 'REPAID', 'CANCELLED', 'DEFAULTED'] as const)
      expect(isWriteOffDue({ status, due_at: due }, at(200))).toBe(false);
    expect(isWriteOffDue({ status: 'ACTIVE' }, at(200))).toBe(false);
  });

  it('PAR30 is the principal of ACTIVE loans 30 or more days past due', () => {
    const loans = [
      { status: 'ACTIVE' as const, due_at: due, principal_usd_micro: 100_000_000 },
      { status: 'ACTIVE' as const, due_at: new Date(Date.parse(due) + DAY).toISOString(), principal_usd_micro: 20_000_000 },
      { status: 'REPAID' as const, due_at: due, principal_usd_micro: 7_000_000 },
      { status: 'DEFAULTED' as const, due_at: due, principal_usd_micro: 5_000_000 },
      { status: 'ACTIVE' as const, principal_usd_micro: 3_000_000 },
    ];
    expect(par30UsdMicro(loans, at(29))).toBe(0);
    expect(par30UsdMicro(loans, at(30))).toBe(100_000_000);
    expect(par30UsdMicro(loans, at(31))).toBe(120_000_000);
  });

  it('vault shares have 12 decimals on chain; the API shows micro-shares and the price per whole share', () => {
    // 250 USDC over 200 whole shares (200 × 10^12 units): 1.25 USDC a share, 200,000,000 micro-shares.
    expect(sharePriceUsdc(250_000_000n, 200n * 10n ** 12n)).toBe(1.25);
    expect(microShares(200n * 10n ** 12n)).toBe(200_000_000);
    expect(microShares(999_999n)).toBe(0);
    expect(sharePriceUsdc(0n, 0n)).toBe(1);
    // A first deposit at the virtual price: 1 USDC buys 10^12 units, one whole share, price 1.
    expect(sharePriceUsdc(1_000_000n, 10n ** 12n)).toBe(1);
  });
});

describe('write-off of defaulted loans (scheduled, through the single ledger writer)', () => {
  const DAY = 86_400_000;

  async function activeLoan(w: ReturnType<typeof world>, batchId: string) {
    const loan = await createLoan({ ...w.deps, batches: fakeBatchStore({ get: async () => aBatch({ batch_id: batchId }) }) }, manager, {
      batch_id: batchId,
      amount_usd_micro: 100_000_000,
    });
    w.loans.set(loan.loan_id, { ...w.loans.get(loan.loan_id)!, status: 'ACTIVE', lock_tx_hash: '0xlock', disbursed_at: loan.created_at });
    return w.loans.get(loan.loan_id)!;
  }

  it('requests WRITE_OFF_LOAN for ACTIVE loans 90+ days past due, once per loan id, and nothing for the others', async () => {
    const w = world();
    const old = await activeLoan(w, 'BATCH-2026-000001');
    const young = await activeLoan(w, 'BATCH-2026-000002');
    w.loans.set(young.loan_id, { ...young, due_at: new Date(Date.parse(old.due_at!) + 2 * DAY).toISOString() });
    const requests: Array<{ id: string; call: VaultCall }> = [];
    const deps = {
      loans: w.deps.loans,
      vaultWrites: {
        request: async (id: string, call: VaultCall) => {
          requests.push({ id, call });
        },
      },
    };

    const before = await writeOffDefaultedLoans({ ...deps, now: () => new Date(Date.parse(old.due_at!) + 90 * DAY - 1) });
    expect(before).toEqual({ due: 0, requested: 0 });
    const report = await writeOffDefaultedLoans({ ...deps, now: () => new Date(Date.parse(old.due_at!) + 90 * DAY) });
    expect(report).toEqual({ due: 1, requested: 1 });
    expect(requests).toEqual([{ id: writeOffWriteId(old.loan_id), call: { kind: 'WRITE_OFF_LOAN', ref: old.loan_id } }]);
  });

  it('mined: the loan DEFAULTED with loss_usd_micro and the tx; a second delivery and a repaid loan change nothing; refused changes nothing', async () => {
    const w = world();
    const loan = await activeLoan(w, 'BATCH-2026-000001');
    const handler = loanWriteOffHandler({ loans: w.deps.loans, now: () => new Date('2027-09-01T00:00:00.000Z') });
    await handler.mined({ kind: 'WRITE_OFF_LOAN', ref: loan.loan_id }, '0xwriteoff', { assetsUsdMicro: 100_000_000n });
    expect(w.loans.get(loan.loan_id)).toMatchObject({
      status: 'DEFAULTED',
      loss_usd_micro: 100_000_000,
      write_off_tx_hash: '0xwriteoff',
      defaulted_at: '2027-09-01T00:00:00.000Z',
    });
    // The token stays with the vault: the batch keeps its guard (no new loan on it).
    expect(w.guards.get(loan.batch_id)).toBe(loan.loan_id);
    await handler.mined({ kind: 'WRITE_OFF_LOAN', ref: loan.loan_id }, '0xother', { assetsUsdMicro: 1n });
    expect(w.loans.get(loan.loan_id)).toMatchObject({ status: 'DEFAULTED', loss_usd_micro: 100_000_000, write_off_tx_hash: '0xwriteoff' });

    const repaid = await activeLoan(w, 'BATCH-2026-000002');
    w.loans.set(repaid.loan_id, { ...w.loans.get(repaid.loan_id)!, status: 'REPAID' });
    await handler.refused({ kind: 'WRITE_OFF_LOAN', ref: repaid.loan_id }, 'LoanNotActive');
    expect(w.loans.get(repaid.loan_id)!.status).toBe('REPAID');
    await handler.mined({ kind: 'WRITE_OFF_LOAN', ref: repaid.loan_id }, '0xlate', { assetsUsdMicro: 100_000_000n });
    expect(w.loans.get(repaid.loan_id)!.status).toBe('REPAID');
  });
});
