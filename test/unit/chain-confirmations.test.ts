import {
  CHAIN_EVENT_RETRY_AFTER_SECONDS,
  confirmationsMissing,
  safeHead,
  type ChainDepthReader,
} from '../../shared/domain/chain-confirmations';
import { DomainError, LedgerUnavailableError } from '../../shared/domain/errors';
import { requireConfirmations } from '../../shared/use-cases/chain-confirmations';
import { onTheWire } from './support/errors';

/** The chain-events webhook applies an event only at the watcher's confirmation depth. */

const TX = `0x${'ab'.repeat(32)}`;
const chain = (block: bigint | null, head: bigint): ChainDepthReader & { reads: number } => {
  const c = {
    reads: 0,
    transactionBlock: async () => {
      c.reads++;
      return block;
    },
    headBlock: async () => head,
  };
  return c;
};

describe('confirmation depth', () => {
  it('the safe head is head − confirmations, as the watcher reads', () => {
    expect(safeHead(100n, 5)).toBe(95n);
    expect(confirmationsMissing(95n, 100n, 5)).toBe(0);
    expect(confirmationsMissing(96n, 100n, 5)).toBe(1);
    expect(confirmationsMissing(100n, 100n, 5)).toBe(5);
    expect(confirmationsMissing(100n, 100n, 0)).toBe(0);
  });

  it('passes an event whose block is deep enough', async () => {
    await expect(requireConfirmations({ chain: chain(95n, 100n), confirmations: 5 }, TX)).resolves.toBeUndefined();
  });

  it('refuses a shallow event: 409 CHAIN_EVENT_NOT_CONFIRMED with Retry-After and the depths', async () => {
    let caught: unknown;
    try {
      await requireConfirmations({ chain: chain(98n, 100n), confirmations: 5 }, TX);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DomainError);
    const e = caught as DomainError;
    expect([e.code, onTheWire(e).status]).toEqual(['CHAIN_EVENT_NOT_CONFIRMED', 409]);
    expect(onTheWire(e).headers).toEqual({ 'Retry-After': String(CHAIN_EVENT_RETRY_AFTER_SECONDS) });
    expect(e.details).toEqual([{ tx_hash: TX, block_number: 98, head_block: 100, confirmations: 5, missing: 3 }]);
  });

  it('reads nothing at depth 0 (local), passes an unmined transaction on to the event checks, and maps a ledger failure to 503', async () => {
    const c = chain(100n, 100n);
    await requireConfirmations({ chain: c, confirmations: 0 }, TX);
    expect(c.reads).toBe(0);
    await expect(requireConfirmations({ chain: chain(null, 100n), confirmations: 5 }, TX)).resolves.toBeUndefined();
    const down: ChainDepthReader = {
      transactionBlock: async () => {
        throw new Error('ECONNREFUSED');
      },
      headBlock: async () => 1n,
    };
    await expect(requireConfirmations({ chain: down, confirmations: 5 }, TX)).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE' });
    const mapped: ChainDepthReader = {
      transactionBlock: async () => {
        throw new LedgerUnavailableError('down');
      },
      headBlock: async () => 1n,
    };
    await expect(requireConfirmations({ chain: mapped, confirmations: 5 }, TX)).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE' });
  });
});
