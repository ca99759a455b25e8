import { FailoverPayoutProvider } from '../../shared/adapters/payout-provider/failover';
import { ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { AccountHolder, CreateProviderOrderInput, PayoutProvider, ProviderOrder } from '../../shared/domain/ports/payouts';

/**
 * The failover rule of the configured providers (docs/api/payouts.md#payout-providers-and-failover):
 * the next provider gets a reference only when the one before is unavailable AND says it has no
 * order under it; an unknown fate stops the failover; a known holder is the only one asked again;
 * the look-up asks every provider.
 */

type Mode = 'ok' | 'down' | 'reject';

/** An in-memory provider: one order per reference; `mode` decides order creation, `lookup` the look-ups. */
class FakeProvider implements PayoutProvider {
  readonly orders = new Map<string, ProviderOrder>();
  creates = 0;
  constructor(
    public mode: Mode = 'ok',
    public lookup: 'ok' | 'down' = 'ok',
    public settle = false,
  ) {}
  async quote() {
    if (this.mode === 'down') throw new ProviderUnavailableError();
    return { quote_id: 'q', rate: '3700', expires_at: '2030-01-01T00:00:00Z' };
  }
  async createOrder(input: CreateProviderOrderInput): Promise<ProviderOrder> {
    this.creates++;
    if (this.mode === 'down') throw new ProviderUnavailableError();
    if (this.mode === 'reject') throw new ProviderRejectedError('RECIPIENT_NOT_FOUND: no', 'INVALID_MSISDN');
    const existing = this.orders.get(input.reference);
    if (existing) return existing;
    const o: ProviderOrder = {
      order_id: `o-${input.reference}`,
      reference: input.reference,
      status: this.settle ? 'SETTLED' : 'PENDING',
      amount_usd_micro: input.amount_usd_micro,
      amount_ugx: 1,
      exchange_rate: '3700',
      recipient: input.recipient,
      created_at: '2026-11-27T00:00:00Z',
    };
    this.orders.set(input.reference, o);
    return o;
  }
  async getOrder(id: string) {
    return [...this.orders.values()].find((o) => o.order_id === id) ?? null;
  }
  async findOrderByReference(ref: string) {
    if (this.lookup === 'down') throw new ProviderUnavailableError();
    return this.orders.get(ref) ?? null;
  }
  /** What the lookup answers: a wallet without its holder's name (no name lookup) unless set. */
  holder: AccountHolder = { found: true, name: null };
  async lookupAccountHolder(): Promise<AccountHolder> {
    if (this.mode === 'down') throw new ProviderUnavailableError();
    return this.holder;
  }
}

const input = (reference = 'PAY-2026-000001-001-A1'): CreateProviderOrderInput => ({
  reference,
  amount_usd_micro: 1_000_000,
  recipient: { phone: '+256700000006', name: 'A B' },
});

describe('FailoverPayoutProvider', () => {
  it('places with the primary when it is available, tagged with its name', async () => {
    const a = new FakeProvider();
    const b = new FakeProvider();
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await expect(p.createOrder(input())).resolves.toMatchObject({ provider: 'provider-api' });
    expect(b.creates).toBe(0);
  });

  it('fails over when the primary is unavailable and has no order under the reference', async () => {
    const a = new FakeProvider('down');
    const b = new FakeProvider();
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await expect(p.createOrder(input())).resolves.toMatchObject({ provider: 'pawapay', reference: input().reference });
    expect(b.orders.size).toBe(1);
  });

  it('does not fail over when the primary cannot be asked either (its order may exist)', async () => {
    const a = new FakeProvider('down', 'down');
    const b = new FakeProvider();
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await expect(p.createOrder(input())).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(b.creates).toBe(0);
  });

  it('answers the primary’s order when its creation timed out but the order exists', async () => {
    const a = new FakeProvider();
    await a.createOrder(input());
    a.mode = 'down';
    const b = new FakeProvider();
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await expect(p.createOrder(input())).resolves.toMatchObject({ provider: 'provider-api' });
    expect(b.creates).toBe(0);
  });

  it('is unavailable only when every provider is; a rejection is not failed over', async () => {
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: new FakeProvider('down') },
      { name: 'pawapay', provider: new FakeProvider('down') },
    ]);
    await expect(p.createOrder(input())).rejects.toThrow(/Every payout provider/);
    const b = new FakeProvider();
    const rejecting = new FailoverPayoutProvider([
      { name: 'provider-api', provider: new FakeProvider('reject') },
      { name: 'pawapay', provider: b },
    ]);
    await expect(rejecting.createOrder(input())).rejects.toBeInstanceOf(ProviderRejectedError);
    expect(b.creates).toBe(0);
  });

  it('a repeated attempt goes only to the provider holding its order, even when the primary is back', async () => {
    const a = new FakeProvider();
    const b = new FakeProvider();
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await p.createOrder({ ...input(), provider: 'pawapay' });
    expect(a.creates).toBe(0);
    expect(b.creates).toBe(1);
  });

  it('finds a reference at any provider, settled first, and is unavailable when none has it and one cannot be asked', async () => {
    const a = new FakeProvider();
    const b = new FakeProvider('ok', 'ok', true);
    await b.createOrder(input());
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: a },
      { name: 'pawapay', provider: b },
    ]);
    await expect(p.findOrderByReference(input().reference)).resolves.toMatchObject({ provider: 'pawapay', status: 'SETTLED' });
    a.lookup = 'down';
    await expect(p.findOrderByReference(input().reference)).resolves.toMatchObject({ provider: 'pawapay' });
    await expect(p.findOrderByReference('PAY-2026-000001-009-A1')).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it('quotes and looks up with the next provider while the primary is unavailable', async () => {
    const p = new FailoverPayoutProvider([
      { name: 'provider-api', provider: new FakeProvider('down') },
      { name: 'pawapay', provider: new FakeProvider() },
    ]);
    await expect(p.quote({})).resolves.toMatchObject({ rate: '3700' });
    await expect(p.lookupAccountHolder('+256700000006')).resolves.toEqual({ found: true, name: null });
  });

  describe('account-holder lookup: the name from the first provider that gives one', () => {
    const named = (name: string): AccountHolder => ({ found: true, name });
    const two = (primary: FakeProvider, second: FakeProvider) =>
      new FailoverPayoutProvider([
        { name: 'pawapay', provider: primary },
        { name: 'provider-api', provider: second },
      ]);

    it('a primary without a name lookup: the next provider names the holder (so the name check runs)', async () => {
      // Failed before the change: the primary's {found, name: null} was the answer and the check was skipped.
      const second = new FakeProvider();
      second.holder = named('Someone Else');
      await expect(two(new FakeProvider(), second).lookupAccountHolder('+256700000005')).resolves.toEqual(named('Someone Else'));
    });

    it('a primary that names the holder is the answer; the next provider is not needed', async () => {
      const primary = new FakeProvider();
      primary.holder = named('Farmer One');
      const second = new FakeProvider('down');
      await expect(two(primary, second).lookupAccountHolder('+256700000007')).resolves.toEqual(named('Farmer One'));
    });

    it('the first answer decides whether the number is a wallet; a later "not found" or outage changes nothing', async () => {
      const notWallet = new FakeProvider();
      notWallet.holder = { found: false };
      await expect(two(notWallet, new FakeProvider()).lookupAccountHolder('+256700000008')).resolves.toEqual({ found: false });
      await expect(two(new FakeProvider(), notWallet).lookupAccountHolder('+256700000009')).resolves.toEqual({ found: true, name: null });
      await expect(two(new FakeProvider(), new FakeProvider('down')).lookupAccountHolder('+256700000009')).resolves.toEqual({
        found: true,
        name: null,
      });
    });

    it('unavailable only when no provider answers', async () => {
      await expect(two(new FakeProvider('down'), new FakeProvider('down')).lookupAccountHolder('+256700000009')).rejects.toBeInstanceOf(
        ProviderUnavailableError,
      );
    });
  });
});
