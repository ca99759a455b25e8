import { DEFAULT_LEDGER_BLOCK_TIME_S, parseBlockTimeSeconds } from '../../infra/local/hardhat-node';

/** LEDGER_BLOCK_TIME_S of the local stack (docs/ledger.md#the-local-chain). */
describe('parseBlockTimeSeconds', () => {
  it('defaults to 2 seconds (Base) when unset or blank', () => {
    expect(DEFAULT_LEDGER_BLOCK_TIME_S).toBe(2);
    expect(parseBlockTimeSeconds(undefined)).toBe(2);
    expect(parseBlockTimeSeconds('  ')).toBe(2);
  });

  it('takes 0 (each transaction mined at once) and seconds up to 60 with at most 3 decimals', () => {
    expect(parseBlockTimeSeconds('0')).toBe(0);
    expect(parseBlockTimeSeconds('2')).toBe(2);
    expect(parseBlockTimeSeconds(' 0.5 ')).toBe(0.5);
    expect(parseBlockTimeSeconds('12.125')).toBe(12.125);
    expect(parseBlockTimeSeconds('60')).toBe(60);
  });

  it.each(['-1', '61', '1e3', '0.0001', 'two', '2s', '0x2', 'Infinity', 'NaN'])('refuses %j, naming the variable', (text) => {
    expect(() => parseBlockTimeSeconds(text)).toThrow(/^LEDGER_BLOCK_TIME_S must be a number of seconds from 0 to 60/);
  });
});
