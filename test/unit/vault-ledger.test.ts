import { decodeFunctionData, type Hex } from 'viem';
import { lendingVaultAbi } from '../../shared/adapters/ledger/abi';
import {
  cooperativeSettlementAddress,
  idOfVaultRef,
  vaultCallData,
  vaultRef,
  vaultRevertReason,
  vaultShareholder,
} from '../../shared/adapters/ledger/vault-ledger';
import type { VaultCall } from '../../shared/domain/vault-calls';

const decode = (call: VaultCall) => {
  const { functionName, data } = vaultCallData(call);
  const decoded = decodeFunctionData({ abi: lendingVaultAbi, data });
  expect(decoded.functionName).toBe(functionName);
  return decoded;
};

describe('vault calls → LendingVault calldata (shared/adapters/ledger/vault-ledger.ts)', () => {
  it('encodes every VaultCall kind with refs as right-padded bytes32 and derived addresses', () => {
    expect(decode({ kind: 'VAULT_DEPOSIT', ref: 'DEP-2026-000001', mfiId: 'MFI-1', assetsUsdMicro: 5n })).toMatchObject({
      functionName: 'depositFor',
      args: [vaultRef('DEP-2026-000001'), 5n, vaultShareholder('MFI-1')],
    });
    expect(decode({ kind: 'VAULT_REVERSE_DEPOSIT', ref: 'DEP-2026-000001', mfiId: 'MFI-1', shares: 7n })).toMatchObject({
      functionName: 'reverseDeposit',
      args: [vaultRef('DEP-2026-000001'), vaultShareholder('MFI-1'), 7n],
    });
    expect(decode({ kind: 'LOCK_COLLATERAL', ref: 'LOAN-2026-000001', tokenId: 0n, principalUsdMicro: 50_000_000n })).toMatchObject({
      functionName: 'openLoan',
      args: [vaultRef('LOAN-2026-000001'), 0n, 50_000_000n],
    });
    expect(decode({ kind: 'CANCEL_LOAN', ref: 'LOAN-2026-000001' })).toMatchObject({
      functionName: 'cancelLoan',
      args: [vaultRef('LOAN-2026-000001')],
    });
    expect(decode({ kind: 'WRITE_OFF_LOAN', ref: 'LOAN-2026-000001' })).toMatchObject({
      functionName: 'writeOffLoan',
      args: [vaultRef('LOAN-2026-000001')],
    });
    expect(vaultCallData({ kind: 'WRITE_OFF_LOAN', ref: 'LOAN-2026-000001' }).functionName).toBe('writeOffLoan');
    expect(
      decode({ kind: 'REPAY_LOAN', ref: 'LOAN-2026-000001', purchaseOrderRef: 'PO-01J9ZQ3V8K2M4N6P8R0T2V4X6Z', amountUsdMicro: 9n }),
    ).toMatchObject({ functionName: 'repayLoan', args: [vaultRef('LOAN-2026-000001'), vaultRef('PO-01J9ZQ3V8K2M4N6P8R0T2V4X6Z'), 9n] });
    expect(
      decode({
        kind: 'REPAY_LOANS',
        ref: 'PO-1',
        repayments: [
          { loanRef: 'LOAN-2026-000001', amountUsdMicro: 9n },
          { loanRef: 'LOAN-2026-000002', amountUsdMicro: 11n },
        ],
      }),
    ).toMatchObject({
      functionName: 'repayLoans',
      args: [
        vaultRef('PO-1'),
        [
          { loanRef: vaultRef('LOAN-2026-000001'), amount: 9n },
          { loanRef: vaultRef('LOAN-2026-000002'), amount: 11n },
        ],
      ],
    });
    expect(decode({ kind: 'RELEASE_REMAINDER', ref: 'PO-1', cooperativeId: 'BUGISU-CU-01', amountUsdMicro: 3n })).toMatchObject({
      functionName: 'releaseRemainder',
      args: [vaultRef('PO-1'), cooperativeSettlementAddress('BUGISU-CU-01'), 3n],
    });
  });

  it('refuses what the vault could never accept before anything is signed', () => {
    expect(() => vaultCallData({ kind: 'VAULT_DEPOSIT', ref: 'DEP-1', mfiId: 'M', assetsUsdMicro: 0n })).toThrow(RangeError);
    expect(() => vaultCallData({ kind: 'LOCK_COLLATERAL', ref: 'LOAN-1', tokenId: -1n, principalUsdMicro: 1n })).toThrow(RangeError);
    expect(() => vaultCallData({ kind: 'CANCEL_LOAN', ref: '' })).toThrow(RangeError);
    expect(() => vaultCallData({ kind: 'REPAY_LOANS', ref: 'PO-1', repayments: [] })).toThrow(RangeError);
    expect(() => vaultCallData({ kind: 'REPAY_LOANS', ref: 'PO-1', repayments: [{ loanRef: 'LOAN-1', amountUsdMicro: 0n }] })).toThrow(
      RangeError,
    );
    expect(() => vaultCallData({ kind: 'CANCEL_LOAN', ref: 'LOAN-é' })).toThrow(RangeError);
    expect(() => vaultCallData({ kind: 'CANCEL_LOAN', ref: 'L'.repeat(33) })).toThrow(RangeError);
  });

  it('refs round-trip; addresses are checksummed and differ by id and by kind', () => {
    const id = 'L'.repeat(32);
    expect(idOfVaultRef(vaultRef(id))).toBe(id);
    expect(vaultRef('A')).toBe(`0x41${'0'.repeat(62)}` as Hex);
    expect(vaultShareholder('X')).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(vaultShareholder('X')).not.toBe(cooperativeSettlementAddress('X'));
  });

  it('vaultRevertReason is undefined for anything that is not a viem revert', () => {
    expect(vaultRevertReason(new Error('socket hang up'))).toBeUndefined();
    expect(vaultRevertReason('nope')).toBeUndefined();
  });
});
