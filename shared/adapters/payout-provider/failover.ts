/**
 * The configured payout providers as one `PayoutProvider` (docs/api/payouts.md#payout-providers-and-failover),
 * in PAYOUT_PROVIDERS order, primary first. The use cases see one port and no provider names; every
 * order this returns carries `provider`, the name of the provider holding it, which the payout records.
 *
 * Failover rule (never two orders for one reference):
 *  - an order is placed with the primary; only when the primary is unavailable after its attempts
 *    (ProviderUnavailableError, its adapter's 3 tries) AND its status lookup then answers that it has
 *    no order under the reference, the same reference goes to the next provider, and so on;
 *  - when the lookup cannot be made either, the order's fate at that provider is unknown: no failover,
 *    ProviderUnavailableError (the caller's existing "order unknown" handling applies);
 *  - a repeated attempt whose order is known (`input.provider`) goes only to the provider holding it;
 *  - PROVIDER_UNAVAILABLE only when every provider is unavailable.
 * A look-up by reference asks every provider (a settled order anywhere is the answer; two settled
 * orders for one reference are logged as the DOUBLE_SETTLEMENT alarm). The account-holder lookup
 * takes the holder's name from the first provider that gives one (lookupAccountHolder).
 */
import { ProviderUnavailableError } from '../../domain/errors';
import type { AccountHolder, CreateProviderOrderInput, PayoutProvider, ProviderOrder, RateQuote } from '../../domain/ports/payouts';
import { logger } from '../../runtime/logger';

/** One configured provider: its PAYOUT_PROVIDERS name and its adapter. */
export interface NamedPayoutProvider {
  name: string;
  provider: PayoutProvider;
}

/** Key of the error log line raised when one reference has settled orders at two providers. */
const DOUBLE_SETTLEMENT_ALARM = 'DOUBLE_SETTLEMENT';

const tagged = (order: ProviderOrder, name: string): ProviderOrder => ({ ...order, provider: name });

/** The providers of PAYOUT_PROVIDERS behind one port, with the failover rule of the module comment. */
export class FailoverPayoutProvider implements PayoutProvider {
  /** @throws TypeError when the list is empty or names a provider twice. */
  constructor(private readonly providers: readonly NamedPayoutProvider[]) {
    if (!providers.length) throw new TypeError('FailoverPayoutProvider: at least one provider is required');
    if (new Set(providers.map((p) => p.name)).size !== providers.length)
      throw new TypeError('FailoverPayoutProvider: duplicate provider name');
  }

  /** The first provider's quote that can be had (the next one's while a provider is unavailable). */
  quote(input: { amount_usd_micro?: number; amount_ugx?: number }): Promise<RateQuote> {
    return this.firstAvailable((p) => p.quote(input));
  }

  /**
   * The order under `input.reference`: at `input.provider` when named, else with the primary, failing
   * over as the module comment says. Errors: ProviderRejectedError from the provider that answered;
   * ProviderUnavailableError when every provider is unavailable or an order's fate is unknown.
   */
  async createOrder(input: CreateProviderOrderInput): Promise<ProviderOrder> {
    const known = input.provider ? this.providers.find((p) => p.name === input.provider) : undefined;
    if (known) return tagged(await known.provider.createOrder(input), known.name);
    let last: ProviderUnavailableError | undefined;
    for (const [i, { name, provider }] of this.providers.entries()) {
      try {
        return tagged(await provider.createOrder(input), name);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
        last = err;
      }
      if (i === this.providers.length - 1) break;
      let placed: ProviderOrder | null;
      try {
        placed = await provider.findOrderByReference(input.reference);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
        logger.warn('payout provider unavailable and its order unknown: no failover for this reference', {
          provider: name,
          reference: input.reference,
        });
        throw last;
      }
      if (placed) return tagged(placed, name);
      logger.warn('payout provider unavailable after its attempts; the order fails over to the next provider', {
        from: name,
        to: this.providers[i + 1]!.name,
        reference: input.reference,
      });
    }
    throw new ProviderUnavailableError(
      this.providers.length > 1
        ? `Every payout provider (${this.providers.map((p) => p.name).join(', ')}) is unavailable; a retry with the same reference is safe.`
        : last!.message,
      last,
    );
  }

  /** The order with this id at the first provider that knows it, or null. */
  async getOrder(orderId: string): Promise<ProviderOrder | null> {
    for (const { name, provider } of this.providers) {
      const o = await provider.getOrder(orderId).catch((err: unknown) => {
        if (err instanceof ProviderUnavailableError && this.providers.length > 1) return null;
        throw err;
      });
      if (o) return tagged(o, name);
    }
    return null;
  }

  /**
   * The reference's order, asking every provider: a SETTLED one first, else any. Errors:
   * ProviderUnavailableError when none has it and some provider could not be asked (it may).
   */
  async findOrderByReference(reference: string): Promise<ProviderOrder | null> {
    if (this.providers.length === 1) {
      const only = this.providers[0]!;
      const o = await only.provider.findOrderByReference(reference);
      return o && tagged(o, only.name);
    }
    const answers = await Promise.all(
      this.providers.map(async ({ name, provider }) => {
        try {
          const o = await provider.findOrderByReference(reference);
          return { name, order: o && tagged(o, name) };
        } catch (err) {
          if (err instanceof ProviderUnavailableError) return { name, error: err };
          throw err;
        }
      }),
    );
    const orders = answers.flatMap((a) => (a.order ? [a.order] : []));
    const settled = orders.filter((o) => o.status === 'SETTLED');
    if (settled.length > 1)
      logger.error('one payout reference settled at two providers', {
        alarm: DOUBLE_SETTLEMENT_ALARM,
        reference,
        providers: settled.map((o) => ({ provider: o.provider, order_id: o.order_id })),
      });
    if (settled[0]) return settled[0];
    const pending = orders.find((o) => o.status === 'PENDING');
    if (pending) return pending;
    const down = answers.find((a) => a.error);
    if (down?.error) throw down.error;
    return orders[0] ?? null;
  }

  /**
   * The account holder of `phone` for the recipient name check, from the first provider (in
   * PAYOUT_PROVIDERS order) whose lookup names the holder (docs/api/payouts.md#recipient-name-check):
   *  - the first provider that answers decides whether the number is a wallet (`found: false` ends
   *    the lookup);
   *  - an answer without a name (`name: null`: that provider has no name lookup, as pawaPay) is
   *    kept, and the next providers are asked for the name only; the first name given is the
   *    answer (the holder is the operator's record, whichever provider reads it); a later
   *    provider that is unavailable or does not know the number changes nothing;
   *  - no provider names the holder: the kept answer (the order is placed without a name check).
   * Errors: ProviderUnavailableError when no provider answers.
   */
  async lookupAccountHolder(phone: string): Promise<AccountHolder> {
    let kept: AccountHolder | undefined;
    let last: unknown;
    for (const { provider } of this.providers) {
      let answer: AccountHolder;
      try {
        answer = await provider.lookupAccountHolder(phone);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
        last = err;
        continue;
      }
      if (!kept) {
        if (!answer.found || answer.name !== null) return answer;
        kept = answer;
      } else if (answer.found && answer.name !== null) return answer;
    }
    if (kept) return kept;
    throw last;
  }

  /** `call` on the providers in order until one is not unavailable. */
  private async firstAvailable<T>(call: (p: PayoutProvider) => Promise<T>): Promise<T> {
    let last: unknown;
    for (const { provider } of this.providers) {
      try {
        return await call(provider);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
        last = err;
      }
    }
    throw last;
  }
}
