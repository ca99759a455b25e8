import type { Loan } from '../../shared/domain/lending';
import type { Caller } from '../../shared/domain/caller';
import { DomainError, ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { Deposit, DepositStatus } from '../../shared/domain/lending';
import type { Hex } from 'viem';
import type { DepositStore, OnRamp, OnRampOrder, VaultWriteQueue } from '../../shared/domain/ports/lending';
import type { WebhookReceiptStore } from '../../shared/domain/ports/messaging';
import type { VaultCall } from '../../shared/domain/vault-calls';
import { depositView, vaultView } from '../../shared/http/deposit-views';
import {
  applyOnRampWebhook,
  createMfiDeposit,
  readDeposit,
  readVault,
  vaultDepositConfirmed,
  vaultReversalConfirmed,
  type DepositDeps,
  type OnRampEvent,
} from '../../shared/use-cases/deposits';
import { onTheWire, wire } from './support/errors';

const TREASURY: Hex = '0x1111111111111111111111111111111111111111';
const MFI_A: Caller = { sub: 'mfi-a-user', role: 'MFI', mfi_id: 'MFI-A', duties: [] };
const MFI_B: Caller = { sub: 'mfi-b-user', role: 'MFI', mfi_id: 'MFI-B', duties: [] };
const ADMIN: Caller = { sub: 'admin', role: 'ADMIN', duties: [] };
const COOP: Caller = { sub: 'coop', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: [] };

/** An in-memory DepositStore with the adapter's conditional semantics. */
function memoryDeposits(): DepositStore & { items: Map<string, Deposit> } {
  const items = new Map<string, Deposit>();
  let counter = 0;
  return {
    items,
    async create(d) {
      if (items.has(d.payment_id)) throw new Error('exists');
      items.set(d.payment_id, { ...d });
    },
    async nextDepositNumber() {
      return ++counter;
    },
    async get(id) {
      const d = items.get(id);
      return d ? { ...d } : null;
    },
    async transition(id, from: DepositStatus[], to, set, at) {
      const d = items.get(id);
      if (!d || !from.includes(d.status)) return false;
      const next: Deposit = { ...d, ...set, status: to, updated_at: at };
      for (const [k, v] of Object.entries(set)) if (v === undefined) Reflect.deleteProperty(next, k);
      items.set(id, next);
      return true;
    },
  };
}

function memoryReceipts(): WebhookReceiptStore {
  const seen = new Set<string>();
  return {
    async hasWebhook(s, id) {
      return seen.has(`${s}#${id}`);
    },
    async claimWebhook(s, id) {
      const k = `${s}#${id}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    },
  };
}

/** A VaultWriteQueue that stores each id once, as the real one does. */
function memoryVaultWrites(): VaultWriteQueue & { calls: Map<string, VaultCall>; requests: number } {
  const calls = new Map<string, VaultCall>();
  const q = {
    calls,
    requests: 0,
    async request(id: string, call: VaultCall) {
      q.requests++;
      if (!calls.has(id)) calls.set(id, call);
    },
  };
  return q;
}

/** An on-ramp that keeps its orders in memory. */
function memoryOnRamp() {
  const orders = new Map<string, OnRampOrder>();
  let n = 0;
  const ramp: OnRamp & { orders: Map<string, OnRampOrder>; creates: number } = {
    orders,
    creates: 0,
    async createOrder(input) {
      ramp.creates++;
      const existing = [...orders.values()].find((o) => o.reference === input.reference);
      if (existing) return existing;
      const o: OnRampOrder = {
        ramp_payment_id: `ramp_${++n}`,
        reference: input.reference,
        status: 'PENDING',
        source_currency: input.source_currency,
        source_amount: input.source_amount,
        usdc_amount_usd_micro: 0,
        destination_address: input.destination_address,
      };
      orders.set(o.ramp_payment_id, o);
      return { ...o };
    },
    async getOrder(id) {
      const o = orders.get(id);
      return o ? { ...o } : null;
    },
  };
  return ramp;
}

function world() {
  const deposits = memoryDeposits();
  const onRamp = memoryOnRamp();
  const vaultWrites = memoryVaultWrites();
  const deps: DepositDeps = {
    deposits,
    onRamp,
    receipts: memoryReceipts(),
    vaultWrites,
    treasury: async () => TREASURY,
    now: () => new Date('2026-11-22T10:00:00Z'),
  };
  /** The on-ramp completes the order: 3700 UGX per USD. */
  const complete = (id: string) => {
    const o = onRamp.orders.get(id)!;
    Object.assign(o, {
      status: 'COMPLETED',
      usdc_amount_usd_micro: Math.floor((o.source_amount * 1_000_000) / 3700),
      completed_at: '2026-11-22T10:00:02Z',
      transfer_tx_hash: '0xabc',
    });
    return o;
  };
  const reverse = (id: string) => Object.assign(onRamp.orders.get(id)!, { status: 'REVERSED', reversed_at: '2026-11-22T10:00:03Z' });
  const event = (type: OnRampEvent['type'], o: OnRampOrder, over: Partial<OnRampEvent['data']> = {}): OnRampEvent => ({
    type,
    data: {
      ramp_payment_id: o.ramp_payment_id,
      reference: o.reference,
      source_currency: o.source_currency,
      source_amount: o.source_amount,
      usdc_amount: (o.usdc_amount_usd_micro / 1e6).toFixed(6),
      transfer_tx_hash: o.transfer_tx_hash ?? null,
      ...over,
    },
  });
  return { deps, deposits, onRamp, vaultWrites, complete, reverse, event };
}

describe('createMfiDeposit', () => {
  it('stores a PROCESSING DEP-<yyyy>-<nnnnnn> for the MFI of the token, then orders from the on-ramp to the treasury (reference = payment id)', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_000 });
    expect(d).toMatchObject({
      payment_id: 'DEP-2026-000001',
      payment_type: 'MFI_DEPOSIT',
      status: 'PROCESSING',
      mfi_id: 'MFI-A',
      source_currency: 'UGX',
      source_amount: 370_000,
      amount_usd_micro: 0,
      ramp_payment_id: 'ramp_1',
    });
    expect([...w.onRamp.orders.values()][0]).toMatchObject({ reference: 'DEP-2026-000001', destination_address: TREASURY });
    expect(depositView(d)).toMatchObject({
      payment_id: 'DEP-2026-000001',
      status: 'PROCESSING',
      amount_usdc: 0,
      ramp_payment_id: 'ramp_1',
      vault_shares_issued: null,
    });
  });

  it('an MFI cannot deposit for another MFI; ADMIN must name the MFI', async () => {
    const w = world();
    await expect(createMfiDeposit(w.deps, MFI_A, { mfi_id: 'MFI-B', source_currency: 'USD', source_amount: 10 })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
    await expect(createMfiDeposit(w.deps, ADMIN, { source_currency: 'USD', source_amount: 10 })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await expect(createMfiDeposit(w.deps, ADMIN, { mfi_id: 'MFI-B', source_currency: 'USD', source_amount: 10 })).resolves.toMatchObject({
      mfi_id: 'MFI-B',
      created_by: 'admin',
    });
    expect(w.deposits.items.size).toBe(1);
  });

  it('on-ramp unreachable: 503 PROVIDER_UNAVAILABLE naming the deposit, which is FAILED; rejected: 400 and FAILED', async () => {
    const w = world();
    w.deps.onRamp.createOrder = async () => {
      throw new ProviderUnavailableError('down');
    };
    const err = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'KES', source_amount: 1290 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(onTheWire(err)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', status: 503, details: { payment_id: 'DEP-2026-000001' } });
    expect(w.deposits.items.get('DEP-2026-000001')).toMatchObject({
      status: 'FAILED',
      failure_reason: expect.stringMatching(/^ONRAMP_UNAVAILABLE/),
    });
    expect(w.vaultWrites.calls.size).toBe(0);

    w.deps.onRamp.createOrder = async () => {
      throw new ProviderRejectedError('AMOUNT_TOO_SMALL: tiny');
    };
    await expect(wire(createMfiDeposit(w.deps, MFI_A, { source_currency: 'KES', source_amount: 1 }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 400,
    });
    expect(w.deposits.items.get('DEP-2026-000002')).toMatchObject({
      status: 'FAILED',
      failure_reason: 'ONRAMP_REJECTED: AMOUNT_TOO_SMALL: tiny',
    });
  });
});

describe('applyOnRampWebhook', () => {
  it('completed, confirmed by the on-ramp: records the USDC and requests VAULT_DEPOSIT once; the mined write completes the deposit', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_000 });
    const o = w.complete(d.ramp_payment_id!);
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'msg_1', event: w.event('onramp.order.completed', o) })).resolves.toEqual({
      received: true,
      outcome: 'APPLIED',
    });
    expect(w.deposits.items.get(d.payment_id)).toMatchObject({ status: 'PROCESSING', amount_usd_micro: 100_000_000 });
    expect(w.vaultWrites.calls.get(`${d.payment_id}-deposit`)).toEqual({
      kind: 'VAULT_DEPOSIT',
      ref: d.payment_id,
      mfiId: 'MFI-A',
      assetsUsdMicro: 100_000_000n,
    });

    // the same webhook replayed, and the event delivered again under another id: nothing more
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'msg_1', event: w.event('onramp.order.completed', o) })).resolves.toMatchObject({
      outcome: 'DUPLICATE_WEBHOOK',
    });
    await applyOnRampWebhook(w.deps, { webhookId: 'msg_2', event: w.event('onramp.order.completed', o) });
    expect(w.vaultWrites.calls.size).toBe(1);

    // 99 whole shares: 99 × 10^12 on-chain units (12 decimals), shown as 99,000,000 micro-shares.
    await vaultDepositConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xdep', shares: 99_000_000_000_000n });
    await vaultDepositConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xother', shares: 1n });
    const done = w.deposits.items.get(d.payment_id)!;
    expect(done).toMatchObject({
      status: 'COMPLETED',
      chain_tx_hash: '0xdep',
      vault_shares_issued: '99000000000000',
      completed_at: '2026-11-22T10:00:00.000Z',
    });
    expect(depositView(done)).toMatchObject({
      status: 'COMPLETED',
      amount_usdc: 100,
      vault_shares_issued: 99_000_000,
      chain_tx_hash: '0xdep',
    });
    // a late completed event for a COMPLETED deposit changes nothing
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'msg_3', event: w.event('onramp.order.completed', o) })).resolves.toMatchObject({
      outcome: 'IGNORED',
    });
  });

  it('MISMATCH when the on-ramp does not confirm (still pending, other amount, unknown order): nothing changes, the alarm is logged', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_000 });
    const pending = w.onRamp.orders.get(d.ramp_payment_id!)!;
    const forged = { ...pending, status: 'COMPLETED' as const, usdc_amount_usd_micro: 100_000_000, transfer_tx_hash: '0xabc' };
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'f1', event: w.event('onramp.order.completed', forged) })).resolves.toMatchObject({
      outcome: 'MISMATCH',
    });
    const o = w.complete(d.ramp_payment_id!);
    await expect(
      applyOnRampWebhook(w.deps, { webhookId: 'f2', event: w.event('onramp.order.completed', o, { usdc_amount: '999.000000' }) }),
    ).resolves.toMatchObject({ outcome: 'MISMATCH' });
    await expect(
      applyOnRampWebhook(w.deps, { webhookId: 'f3', event: w.event('onramp.order.completed', o, { ramp_payment_id: 'ramp_404' }) }),
    ).resolves.toMatchObject({ outcome: 'MISMATCH' });
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'f4', event: w.event('onramp.order.reversed', o) })).resolves.toMatchObject({
      outcome: 'MISMATCH',
    });
    await expect(
      applyOnRampWebhook(w.deps, { webhookId: 'f5', event: w.event('onramp.order.completed', o, { reference: 'DEP-2026-999999' }) }),
    ).resolves.toMatchObject({ outcome: 'UNKNOWN_REFERENCE' });
    expect(w.deposits.items.get(d.payment_id)).toMatchObject({ status: 'PROCESSING', amount_usd_micro: 0 });
    expect(w.vaultWrites.calls.size).toBe(0);
    // an order of another deposit named in the event (its reference differs): MISMATCH
    const d2 = await createMfiDeposit(w.deps, MFI_B, { source_currency: 'UGX', source_amount: 370_000 });
    await expect(
      applyOnRampWebhook(w.deps, { webhookId: 'f6', event: w.event('onramp.order.completed', o, { reference: d2.payment_id }) }),
    ).resolves.toMatchObject({ outcome: 'MISMATCH' });
  });

  it('on-ramp unreachable while confirming: 503 and no receipt, so the retry is applied', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_000 });
    const o = w.complete(d.ramp_payment_id!);
    const getOrder = w.deps.onRamp.getOrder;
    w.deps.onRamp.getOrder = async () => {
      throw new ProviderUnavailableError('down');
    };
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'm', event: w.event('onramp.order.completed', o) })).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
    });
    w.deps.onRamp.getOrder = getOrder;
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'm', event: w.event('onramp.order.completed', o) })).resolves.toMatchObject({
      outcome: 'APPLIED',
    });
  });

  it("reversal after the vault write: VAULT_REVERSE_DEPOSIT with the deposit's shares, then REFUNDED", async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_013 });
    const o = w.complete(d.ramp_payment_id!);
    await applyOnRampWebhook(w.deps, { webhookId: 'c', event: w.event('onramp.order.completed', o) });
    await vaultDepositConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xdep', shares: 100_003_513n });
    w.reverse(d.ramp_payment_id!);
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'r', event: w.event('onramp.order.reversed', o) })).resolves.toMatchObject({
      outcome: 'APPLIED',
    });
    expect(w.vaultWrites.calls.get(`${d.payment_id}-reverse`)).toEqual({
      kind: 'VAULT_REVERSE_DEPOSIT',
      ref: d.payment_id,
      mfiId: 'MFI-A',
      shares: 100_003_513n,
    });
    await applyOnRampWebhook(w.deps, { webhookId: 'r2', event: w.event('onramp.order.reversed', o) });
    expect(w.vaultWrites.calls.size).toBe(2);
    await vaultReversalConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xrev', shares: 100_003_513n });
    expect(w.deposits.items.get(d.payment_id)).toMatchObject({
      status: 'REFUNDED',
      refund_tx_hash: '0xrev',
      refunded_at: '2026-11-22T10:00:00.000Z',
      chain_tx_hash: '0xdep',
    });
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'r3', event: w.event('onramp.order.reversed', o) })).resolves.toMatchObject({
      outcome: 'IGNORED',
    });
  });

  it('reversal before the vault write is mined: remembered, requested by vaultDepositConfirmed', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 3_700_013 });
    const o = w.complete(d.ramp_payment_id!);
    await applyOnRampWebhook(w.deps, { webhookId: 'c', event: w.event('onramp.order.completed', o) });
    w.reverse(d.ramp_payment_id!);
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'r', event: w.event('onramp.order.reversed', o) })).resolves.toMatchObject({
      outcome: 'APPLIED',
    });
    expect(w.vaultWrites.calls.has(`${d.payment_id}-reverse`)).toBe(false);
    expect(w.deposits.items.get(d.payment_id)).toMatchObject({ status: 'PROCESSING', reversed_at: '2026-11-22T10:00:03Z' });
    await vaultDepositConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xdep', shares: 7n });
    expect(w.vaultWrites.calls.get(`${d.payment_id}-reverse`)).toEqual({
      kind: 'VAULT_REVERSE_DEPOSIT',
      ref: d.payment_id,
      mfiId: 'MFI-A',
      shares: 7n,
    });
    await vaultReversalConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xrev', shares: 7n });
    expect(w.deposits.items.get(d.payment_id)!.status).toBe('REFUNDED');
  });

  it('a reversal that arrives before the completion event records the completion first (order irrelevant)', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_013 });
    const o = w.complete(d.ramp_payment_id!);
    w.reverse(d.ramp_payment_id!);
    await applyOnRampWebhook(w.deps, { webhookId: 'r', event: w.event('onramp.order.reversed', o) });
    expect(w.vaultWrites.calls.get(`${d.payment_id}-deposit`)).toMatchObject({ kind: 'VAULT_DEPOSIT', assetsUsdMicro: 100_003_513n });
    // the late completion event is confirmed too (the order completed before it was reversed) and changes nothing more
    await applyOnRampWebhook(w.deps, { webhookId: 'c', event: w.event('onramp.order.completed', o) });
    expect(w.vaultWrites.calls.size).toBe(1);
    await vaultDepositConfirmed(w.deps, { payment_id: d.payment_id, tx_hash: '0xdep', shares: 5n });
    expect(w.vaultWrites.calls.get(`${d.payment_id}-reverse`)).toMatchObject({ shares: 5n });
  });

  it('a completion of an order whose create answer was lost revives the FAILED deposit', async () => {
    const w = world();
    const create = w.deps.onRamp.createOrder.bind(w.deps.onRamp);
    w.deps.onRamp.createOrder = async (input) => {
      await create(input);
      throw new ProviderUnavailableError('answer lost');
    };
    await expect(createMfiDeposit(w.deps, MFI_A, { source_currency: 'UGX', source_amount: 370_000 })).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
    });
    const o = w.complete('ramp_1');
    await expect(applyOnRampWebhook(w.deps, { webhookId: 'c', event: w.event('onramp.order.completed', o) })).resolves.toMatchObject({
      outcome: 'APPLIED',
    });
    const d = w.deposits.items.get('DEP-2026-000001')!;
    expect(d).toMatchObject({ status: 'PROCESSING', ramp_payment_id: 'ramp_1', amount_usd_micro: 100_000_000 });
    expect(d.failure_reason).toBeUndefined();
  });
});

describe('readDeposit', () => {
  it('an MFI reads its own deposits only; COOPERATIVE never; ADMIN all', async () => {
    const w = world();
    const d = await createMfiDeposit(w.deps, MFI_A, { source_currency: 'USD', source_amount: 50 });
    await expect(readDeposit(w.deposits, MFI_A, d.payment_id)).resolves.toMatchObject({ payment_id: d.payment_id });
    await expect(readDeposit(w.deposits, ADMIN, d.payment_id)).resolves.toMatchObject({ payment_id: d.payment_id });
    await expect(wire(readDeposit(w.deposits, MFI_B, d.payment_id))).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
      status: 403,
    });
    await expect(wire(readDeposit(w.deposits, COOP, d.payment_id))).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
      status: 403,
    });
    await expect(wire(readDeposit(w.deposits, ADMIN, 'DEP-2026-000099'))).rejects.toMatchObject({ code: 'PAYMENT_NOT_FOUND', status: 404 });
  });
});

describe('readVault', () => {
  it('figures of the vault (shares in micro-shares; on chain 12 decimals), PAR30 and defaults, and for an MFI its own position', async () => {
    const vault = {
      state: async () => ({
        total_assets_usd_micro: 250_000_000n,
        total_shares: 200_000_000_000_000n,
        loans_outstanding_usd_micro: 100_000_000n,
        loans_written_off_usd_micro: 40_000_000n,
        idle_usd_micro: 150_000_000n,
      }),
      mfiPosition: async (id: string) =>
        id === 'MFI-A' ? { shares: 80_000_000_000_000n, value_usd_micro: 100_000_000n } : { shares: 0n, value_usd_micro: 0n },
    } as never;
    const now = new Date('2027-06-30T00:00:00.000Z');
    const asked: string[] = [];
    const loans = {
      activeDueBy: async (by: string) => {
        asked.push(by);
        // due 2027-05-31 (30 days past due at `now`) and due 2027-05-01
        return [
          { ...({} as Loan), status: 'ACTIVE' as const, due_at: '2027-05-31T00:00:00.000Z', principal_usd_micro: 60_000_000 },
          { ...({} as Loan), status: 'ACTIVE' as const, due_at: '2027-05-01T00:00:00.000Z', principal_usd_micro: 15_500_000 },
        ].filter((l) => l.due_at <= by);
      },
    };
    const deps = { vault, apr: '0.12', loans, now: () => now };
    const mfi = vaultView(await readVault(deps, MFI_A));
    expect(mfi).toEqual({
      total_assets_usdc: 250,
      total_shares: 200_000_000,
      share_price_usdc: 1.25,
      loans_outstanding_usdc: 100,
      utilisation: 0.4,
      apr: 0.12,
      par30_usdc: 75.5,
      defaults_usdc: 40,
      shares: 80_000_000,
      value_usdc: 100,
    });
    expect(asked).toEqual(['2027-05-31T00:00:00.000Z']);
    const admin = vaultView(await readVault(deps, ADMIN));
    expect(admin).not.toHaveProperty('shares');
    expect(vaultView(await readVault({ ...deps, now: () => new Date('2027-06-29T23:59:59.999Z') }, ADMIN)).par30_usdc).toBe(15.5);
    await expect(readVault(deps, COOP)).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
  });
});
