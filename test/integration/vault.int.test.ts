import { randomBytes, randomInt } from 'node:crypto';
import { createPublicClient, createWalletClient, http, keccak256, maxUint256, parseEventLogs, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, setUpLocalVaultAccounts, type DeployedContracts } from '../../infra/ledger/deploy';
import { batchTokenAbi, lendingVaultAbi, testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { EvmLedger, REFUSED_VAULT_CALL_GAS, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { cooperativeSettlementAddress, idOfVaultRef, vaultRef, vaultShareholder } from '../../shared/adapters/ledger/vault-ledger';
import { EvmVaultReader } from '../../shared/adapters/ledger/vault-reader';
import { formatBatchId, tokenIdForBatch } from '../../shared/domain/ids';
import { refundIdOf } from '../../shared/domain/lending';
import type { VaultCall } from '../../shared/domain/vault-calls';
import { localStack } from '../support/api';

/**
 * The lending vault (LendingVault.sol) through its adapters (EvmLedger.vaultCallKept,
 * EvmVaultReader) on the local stack's hardhat node. The flows run on a deployment of their own
 * made with a fresh key (the stack's signer is the stack's ledger writer's: sharing its nonces
 * would race); the stack's own deployment is checked read-only, and `npm run buyer-pay` pays into it.
 */

const CHAIN_ID = 31337;
const USDC = 1_000_000n;
/** One whole vault share on chain: 12 decimals (the asset's 6 + the vault's decimals offset 6). */
const SHARE = 10n ** 12n;
const run = randomBytes(4).toString('hex').toUpperCase();
const ref = (kind: string, n: number) => `${kind}-${run}-${n}`;

interface StackJson {
  endpoints: Record<string, string>;
  chain_id: number;
}
const stackJson = (): StackJson => localStack();

describe('LendingVault through EvmLedger.vaultCallKept and EvmVaultReader (local stack chain)', () => {
  let rpcUrl: string;
  let operatorKey: Hex;
  let operator: Hex;
  let buyerKey: Hex;
  let contracts: DeployedContracts;
  let ledger: EvmLedger;
  let reader: EvmVaultReader;
  const kept: Array<{ rawTx: Hex; txHash: Hex; nonce: number }> = [];
  const keep = async (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => {
    kept.push(signed);
  };

  const client = () => createPublicClient({ chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
  const usdcOf = (address: Hex) =>
    client().readContract({ address: contracts.vaultAssetAddress, abi: testUsdcAbi, functionName: 'balanceOf', args: [address] });
  const ownerOf = (tokenId: bigint) =>
    client().readContract({ address: contracts.batchTokenAddress, abi: batchTokenAbi, functionName: 'ownerOf', args: [tokenId] });
  const assetsPerShare = () =>
    client().readContract({ address: contracts.lendingVaultAddress, abi: lendingVaultAbi, functionName: 'convertToAssets', args: [SHARE] });
  const write = async (call: VaultCall) => {
    const before = kept.length;
    const { txHash } = await ledger.vaultCallKept(call, keep);
    expect(kept.slice(before)).toEqual([expect.objectContaining({ txHash, rawTx: expect.stringMatching(/^0x[0-9a-f]+$/) })]);
    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    // Every vault call fits the gas a refused call is sent with (so a refusal that turns out fine on chain still lands).
    if (receipt?.status === 'success')
      expect((await client().getTransactionReceipt({ hash: txHash })).gasUsed).toBeLessThan(REFUSED_VAULT_CALL_GAS);
    return { txHash, status: receipt?.status };
  };
  const mintToken = async () => {
    const n = randomInt(1, 1_000_000_000_000);
    const tokenId = tokenIdForBatch(2099, n);
    const { txHash } = await ledger.mintBatchToken({
      tokenId,
      batchId: formatBatchId(2099, n),
      auditHash: keccak256(toHex(`audit ${tokenId}`)),
    });
    expect((await ledger.waitForReceipt(txHash, 10_000))?.status).toBe('success');
    return tokenId;
  };

  beforeAll(async () => {
    rpcUrl = stackJson().endpoints.ledger!;
    operatorKey = generatePrivateKey();
    operator = privateKeyToAccount(operatorKey).address;
    buyerKey = generatePrivateKey();
    await fundAccount(rpcUrl, operator, 10n ** 21n);
    contracts = await deployContracts({ rpcUrl, chainId: CHAIN_ID, deployerKey: operatorKey, artifacts: await compileContracts() });
    await setUpLocalVaultAccounts({
      rpcUrl,
      chainId: CHAIN_ID,
      adminKey: operatorKey,
      testUsdcAddress: contracts.vaultAssetAddress,
      buyerAddress: privateKeyToAccount(buyerKey).address,
      buyerUsdcMicro: 5_000n * USDC,
      onRampAddress: privateKeyToAccount(generatePrivateKey()).address,
    });
    // The treasury's USDC (locally minted; in AWS the on-ramp delivers it).
    const wallet = createWalletClient({
      account: privateKeyToAccount(operatorKey),
      chain: ledgerChain(CHAIN_ID, rpcUrl),
      transport: http(rpcUrl),
    });
    const minted = await wallet.writeContract({
      address: contracts.vaultAssetAddress,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [operator, 10_000n * USDC],
    });
    await client().waitForTransactionReceipt({ hash: minted });
    ledger = new EvmLedger({ rpcUrl, chainId: CHAIN_ID, signerPrivateKey: operatorKey, retryCount: 0, ...contracts });
    reader = new EvmVaultReader({ rpcUrl, chainId: CHAIN_ID, lendingVaultAddress: contracts.lendingVaultAddress, retryCount: 0 });
  }, 60_000);

  const mfiA = `MFI-A-${run}`;
  const mfiB = `MFI-B-${run}`;
  let lockedToken: bigint;
  let priceBeforeRepay: bigint;

  it('references are the ids right-padded; shareholder and settlement addresses are derived from the ids', () => {
    expect(vaultRef('LOAN-2026-000001')).toBe(`0x${Buffer.from('LOAN-2026-000001').toString('hex').padEnd(64, '0')}`);
    expect(idOfVaultRef(vaultRef('PO-01J9ZQ3V8K2M4N6P8R0T2V4X6Z'))).toBe('PO-01J9ZQ3V8K2M4N6P8R0T2V4X6Z');
    expect(() => vaultRef('X'.repeat(33))).toThrow(RangeError);
    expect(vaultShareholder('MFI-1').toLowerCase()).toBe(`0x${keccak256(toHex('coffee-trace:mfi:MFI-1')).slice(-40)}`);
    expect(cooperativeSettlementAddress('BUGISU-CU-01').toLowerCase()).toBe(
      `0x${keccak256(toHex('coffee-trace:cooperative:BUGISU-CU-01')).slice(-40)}`,
    );
    expect(vaultShareholder('MFI-1')).not.toBe(vaultShareholder('MFI-2'));
  });

  it('deposits: USDC from the treasury, shares to the MFI shareholder; position, state and writeResult', async () => {
    const treasuryBefore = await usdcOf(operator);
    const a = await write({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 1), mfiId: mfiA, assetsUsdMicro: 1_000n * USDC });
    expect(a.status).toBe('success');
    expect(await reader.writeResult(a.txHash)).toEqual({ shares: 1_000n * SHARE, assetsUsdMicro: 1_000n * USDC });
    const b = await write({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 2), mfiId: mfiB, assetsUsdMicro: 500n * USDC });
    expect(await reader.writeResult(b.txHash)).toEqual({ shares: 500n * SHARE, assetsUsdMicro: 500n * USDC });

    expect(await usdcOf(operator)).toBe(treasuryBefore - 1_500n * USDC);
    expect(await reader.mfiPosition(mfiA)).toEqual({ shares: 1_000n * SHARE, value_usd_micro: 1_000n * USDC });
    expect(await reader.mfiPosition(`MFI-NONE-${run}`)).toEqual({ shares: 0n, value_usd_micro: 0n });
    expect(await reader.state()).toEqual({
      total_assets_usd_micro: 1_500n * USDC,
      total_shares: 1_500n * SHARE,
      loans_outstanding_usd_micro: 0n,
      loans_written_off_usd_micro: 0n,
      idle_usd_micro: 1_500n * USDC,
    });
    expect(await assetsPerShare()).toBe(USDC);
  });

  it('a deposit reference used twice is refused on chain (RefUsed): mined reverted, nothing minted', async () => {
    const again = await write({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 1), mfiId: mfiA, assetsUsdMicro: 1n * USDC });
    expect(again.status).toBe('reverted');
    expect(await reader.refusalReason(again.txHash)).toBe('RefUsed');
    expect(await reader.writeResult(again.txHash)).toBeNull();
    expect((await reader.mfiPosition(mfiA)).shares).toBe(1_000n * SHARE);
  });

  it('openLoan locks the BatchToken in the vault and sends the principal to the treasury', async () => {
    lockedToken = await mintToken();
    expect((await ownerOf(lockedToken)).toLowerCase()).toBe(operator.toLowerCase());
    const treasuryBefore = await usdcOf(operator);
    const lock = await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 1), tokenId: lockedToken, principalUsdMicro: 300n * USDC });
    expect(lock.status).toBe('success');
    expect(await reader.writeResult(lock.txHash)).toEqual({ assetsUsdMicro: 300n * USDC });
    expect((await ownerOf(lockedToken)).toLowerCase()).toBe(contracts.lendingVaultAddress.toLowerCase());
    expect(await usdcOf(operator)).toBe(treasuryBefore + 300n * USDC);
    expect(await reader.loan(ref('LOAN', 1))).toEqual({ status: 'ACTIVE', tokenId: lockedToken, principalUsdMicro: 300n * USDC });
    expect(await reader.state()).toEqual({
      total_assets_usd_micro: 1_500n * USDC,
      total_shares: 1_500n * SHARE,
      loans_outstanding_usd_micro: 300n * USDC,
      loans_written_off_usd_micro: 0n,
      idle_usd_micro: 1_200n * USDC,
    });
  });

  it('a second loan on a locked token is refused: kept and mined as reverted, refusalReason TokenLocked, no money moves', async () => {
    const treasuryBefore = await usdcOf(operator);
    const second = await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 2), tokenId: lockedToken, principalUsdMicro: 10n * USDC });
    expect(second.status).toBe('reverted');
    expect(await reader.refusalReason(second.txHash)).toBe('TokenLocked');
    expect(await reader.writeResult(second.txHash)).toBeNull();
    expect(await reader.loan(ref('LOAN', 2))).toEqual({ status: 'NONE', tokenId: 0n, principalUsdMicro: 0n });
    expect(await usdcOf(operator)).toBe(treasuryBefore);
    // Asked `unlessRefused` (a write landed ahead of the backlog, docs/ledger.md#vault-writes-ahead-of-the-backlog): nothing signed, the vault's error thrown.
    const keptBefore = kept.length;
    const call: VaultCall = { kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 3), tokenId: lockedToken, principalUsdMicro: 10n * USDC };
    await expect(ledger.vaultCallKept(call, keep, { unlessRefused: true })).rejects.toMatchObject({
      name: 'LedgerRefusedError',
      reason: 'TokenLocked',
    });
    expect(kept).toHaveLength(keptBefore);
    // More than the idle USDC: InsufficientLiquidity.
    const tooBig = await write({
      kind: 'LOCK_COLLATERAL',
      ref: ref('LOAN', 9),
      tokenId: await mintToken(),
      principalUsdMicro: 1_201n * USDC,
    });
    expect(tooBig.status).toBe('reverted');
    expect(await reader.refusalReason(tooBig.txHash)).toBe('InsufficientLiquidity');
    // A refusal the adapter cannot get past (bad input) throws before anything is signed.
    await expect(ledger.vaultCallKept({ kind: 'CANCEL_LOAN', ref: 'X'.repeat(40) }, keep)).rejects.toThrow(RangeError);
  });

  let poTx: Hex;
  it('a buyer payment (payPurchaseOrder) is read back by purchaseOrderPaymentsInTx and purchaseOrderPayments; it is not a vault asset', async () => {
    const buyer = privateKeyToAccount(buyerKey);
    const wallet = createWalletClient({ account: buyer, chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
    const approve = await wallet.writeContract({
      address: contracts.vaultAssetAddress,
      abi: testUsdcAbi,
      functionName: 'approve',
      args: [contracts.lendingVaultAddress, maxUint256],
    });
    await client().waitForTransactionReceipt({ hash: approve });
    poTx = await wallet.writeContract({
      address: contracts.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef(ref('PO', 1)), 400n * USDC],
    });
    const receipt = await client().waitForTransactionReceipt({ hash: poTx });

    const payments = await reader.purchaseOrderPaymentsInTx(poTx);
    expect(payments).toEqual([
      {
        purchaseOrderId: ref('PO', 1),
        payer: buyer.address,
        amountUsdMicro: 400n * USDC,
        txHash: poTx,
        logIndex: expect.any(Number),
        blockNumber: receipt.blockNumber,
      },
    ]);
    expect(await reader.purchaseOrderPayments(receipt.blockNumber, receipt.blockNumber)).toEqual(payments);
    expect(await reader.purchaseOrderPaymentsInTx(`0x${'ab'.repeat(32)}`)).toEqual([]);
    expect(await reader.purchaseOrderPaymentsInTx(approve)).toEqual([]);
    expect(await reader.escrowOf(ref('PO', 1))).toBe(400n * USDC);
    const state = await reader.state();
    expect(state.total_assets_usd_micro).toBe(1_500n * USDC);
    expect(state.idle_usd_micro).toBe(1_200n * USDC);
  });

  it('repayLoan with interest raises the share price and returns the token; a repayment above the escrow is refused', async () => {
    priceBeforeRepay = await assetsPerShare();
    const short = await write({ kind: 'REPAY_LOAN', ref: ref('LOAN', 1), purchaseOrderRef: ref('PO', 1), amountUsdMicro: 401n * USDC });
    expect(short.status).toBe('reverted');
    expect(await reader.refusalReason(short.txHash)).toBe('InsufficientEscrow');

    const repay = await write({ kind: 'REPAY_LOAN', ref: ref('LOAN', 1), purchaseOrderRef: ref('PO', 1), amountUsdMicro: 330n * USDC });
    expect(repay.status).toBe('success');
    // A single repayment's result also names its loan, as each of repayLoans' repayments does.
    expect(await reader.writeResult(repay.txHash)).toEqual({
      assetsUsdMicro: 330n * USDC,
      repayments: [{ loanId: ref('LOAN', 1), amountUsdMicro: 330n * USDC, repaid: true }],
    });
    expect(await reader.loan(ref('LOAN', 1))).toEqual({ status: 'REPAID', tokenId: lockedToken, principalUsdMicro: 300n * USDC });
    expect((await ownerOf(lockedToken)).toLowerCase()).toBe(operator.toLowerCase());
    expect(await reader.escrowOf(ref('PO', 1))).toBe(70n * USDC);
    expect(await reader.state()).toEqual({
      total_assets_usd_micro: 1_530n * USDC,
      total_shares: 1_500n * SHARE,
      loans_outstanding_usd_micro: 0n,
      loans_written_off_usd_micro: 0n,
      idle_usd_micro: 1_530n * USDC,
    });
    const priceAfter = await assetsPerShare();
    expect(priceAfter).toBeGreaterThan(priceBeforeRepay);
    expect(priceAfter).toBe(1_019_999n); // 1 530 / 1 500 USDC per share, rounded down (virtual share and asset)
    expect((await reader.mfiPosition(mfiA)).value_usd_micro).toBe(1_019_999_999n);
  });

  it('releaseRemainder pays what is left of the buyer payment to the cooperative settlement address', async () => {
    const coop = `COOP-${run}`;
    const release = await write({ kind: 'RELEASE_REMAINDER', ref: ref('PO', 1), cooperativeId: coop, amountUsdMicro: 70n * USDC });
    expect(release.status).toBe('success');
    expect(await reader.writeResult(release.txHash)).toEqual({ assetsUsdMicro: 70n * USDC });
    expect(await usdcOf(cooperativeSettlementAddress(coop))).toBe(70n * USDC);
    expect(await reader.escrowOf(ref('PO', 1))).toBe(0n);
    const again = await write({ kind: 'RELEASE_REMAINDER', ref: ref('PO', 1), cooperativeId: coop, amountUsdMicro: 1n });
    expect(again.status).toBe('reverted');
    expect(await reader.refusalReason(again.txHash)).toBe('InsufficientEscrow');
    expect((await reader.state()).total_assets_usd_micro).toBe(1_530n * USDC);
  });

  it("refundPayment returns an unapplied buyer payment to its payer from the order's escrow, once per refund reference", async () => {
    const buyer = privateKeyToAccount(buyerKey);
    const wallet = createWalletClient({ account: buyer, chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
    const paid = await wallet.writeContract({
      address: contracts.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef(ref('PO', 2)), 25n * USDC],
    });
    await client().waitForTransactionReceipt({ hash: paid });
    const stateBefore = await reader.state();
    const buyerBefore = await usdcOf(buyer.address);
    const refundRef = refundIdOf(paid, 0);
    const call: VaultCall = {
      kind: 'REFUND_PAYMENT',
      ref: refundRef,
      purchaseOrderRef: ref('PO', 2),
      to: buyer.address,
      amountUsdMicro: 25n * USDC,
      paymentTxHash: paid,
      paymentLogIndex: 0,
    };

    // More than the order's escrow: refused, nothing moves.
    const tooMuch = await write({ ...call, ref: refundIdOf(paid, 99), amountUsdMicro: 26n * USDC });
    expect(tooMuch.status).toBe('reverted');
    expect(await reader.refusalReason(tooMuch.txHash)).toBe('InsufficientEscrow');

    const refund = await write(call);
    expect(refund.status).toBe('success');
    expect(await reader.writeResult(refund.txHash)).toEqual({ assetsUsdMicro: 25n * USDC });
    expect(await usdcOf(buyer.address)).toBe(buyerBefore + 25n * USDC);
    expect(await reader.escrowOf(ref('PO', 2))).toBe(0n);
    const logs = parseEventLogs({
      abi: lendingVaultAbi,
      eventName: 'PaymentRefunded',
      logs: (await client().getTransactionReceipt({ hash: refund.txHash })).logs,
    });
    expect(logs.map((l) => l.args)).toEqual([
      { poRef: vaultRef(ref('PO', 2)), refundRef: vaultRef(refundRef), to: buyer.address, amount: 25n * USDC },
    ]);
    // Escrow is not a vault asset: the refund leaves the share price alone.
    expect(await reader.state()).toEqual(stateBefore);

    // The same refund reference again (even with escrow to take): RefundRefUsed.
    const more = await wallet.writeContract({
      address: contracts.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef(ref('PO', 2)), 25n * USDC],
    });
    await client().waitForTransactionReceipt({ hash: more });
    const twice = await write(call);
    expect(twice.status).toBe('reverted');
    expect(await reader.refusalReason(twice.txHash)).toBe('RefundRefUsed');
    expect(await reader.escrowOf(ref('PO', 2))).toBe(25n * USDC);
    // Only the operator refunds.
    await expect(
      client().simulateContract({
        account: buyer,
        address: contracts.lendingVaultAddress,
        abi: lendingVaultAbi,
        functionName: 'refundPayment',
        args: [vaultRef(ref('PO', 2)), vaultRef(refundIdOf(more, 0)), buyer.address, 25n * USDC],
      }),
    ).rejects.toThrow(/AccessControlUnauthorizedAccount/);
  });

  it('cancelLoan takes the principal back from the treasury and unlocks the token', async () => {
    const tokenId = await mintToken();
    await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 3), tokenId, principalUsdMicro: 100n * USDC });
    const treasuryBefore = await usdcOf(operator);
    const cancel = await write({ kind: 'CANCEL_LOAN', ref: ref('LOAN', 3) });
    expect(cancel.status).toBe('success');
    expect(await reader.writeResult(cancel.txHash)).toEqual({ assetsUsdMicro: 100n * USDC });
    expect(await usdcOf(operator)).toBe(treasuryBefore - 100n * USDC);
    expect((await ownerOf(tokenId)).toLowerCase()).toBe(operator.toLowerCase());
    expect(await reader.loan(ref('LOAN', 3))).toEqual({ status: 'CANCELLED', tokenId, principalUsdMicro: 100n * USDC });
    expect((await reader.state()).loans_outstanding_usd_micro).toBe(0n);
    const twice = await write({ kind: 'CANCEL_LOAN', ref: ref('LOAN', 3) });
    expect(await reader.refusalReason(twice.txHash)).toBe('LoanNotActive');
    // The token is free again: a new loan on it locks it.
    expect((await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 4), tokenId, principalUsdMicro: 50n * USDC })).status).toBe('success');
  });

  it("reverseDeposit burns the MFI's shares and sends what they are worth back to the treasury", async () => {
    const { shares, value_usd_micro } = await reader.mfiPosition(mfiB);
    expect(shares).toBe(500n * SHARE);
    const treasuryBefore = await usdcOf(operator);
    const reverse = await write({ kind: 'VAULT_REVERSE_DEPOSIT', ref: ref('DEP', 2), mfiId: mfiB, shares });
    expect(reverse.status).toBe('success');
    expect(await reader.writeResult(reverse.txHash)).toEqual({ shares, assetsUsdMicro: value_usd_micro });
    expect(await usdcOf(operator)).toBe(treasuryBefore + value_usd_micro);
    expect(await reader.mfiPosition(mfiB)).toEqual({ shares: 0n, value_usd_micro: 0n });
    expect((await reader.state()).total_shares).toBe(1_000n * SHARE);
    const twice = await write({ kind: 'VAULT_REVERSE_DEPOSIT', ref: ref('DEP', 2), mfiId: mfiB, shares: 1n });
    expect(await reader.refusalReason(twice.txHash)).toBe('RefUsed');
  });

  it('writeOffLoan: the loan DEFAULTED, its principal leaves loansOutstanding and totalAssets, the share price drops; the token stays in the vault; no second write-off, no repayment after it', async () => {
    const loanRef = ref('LOAN', 4); // ACTIVE, 50 USDC, from the cancelLoan test
    const before = await reader.state();
    const priceBefore = await assetsPerShare();
    const mfiValueBefore = (await reader.mfiPosition(mfiA)).value_usd_micro;
    const { tokenId } = await reader.loan(loanRef);

    const off = await write({ kind: 'WRITE_OFF_LOAN', ref: loanRef });
    expect(off.status).toBe('success');
    expect(await reader.writeResult(off.txHash)).toEqual({ assetsUsdMicro: 50n * USDC });
    expect(await reader.loan(loanRef)).toEqual({ status: 'DEFAULTED', tokenId, principalUsdMicro: 50n * USDC });
    const after = await reader.state();
    expect(after).toEqual({
      ...before,
      total_assets_usd_micro: before.total_assets_usd_micro - 50n * USDC,
      loans_outstanding_usd_micro: before.loans_outstanding_usd_micro - 50n * USDC,
      loans_written_off_usd_micro: before.loans_written_off_usd_micro + 50n * USDC,
    });
    const priceAfter = await assetsPerShare();
    expect(priceAfter).toBeLessThan(priceBefore);
    expect(priceBefore - priceAfter).toBe(50_000n); // 50 USDC over 1 000 shares: 0.05 USDC a share
    expect((await reader.mfiPosition(mfiA)).value_usd_micro).toBeLessThan(mfiValueBefore);
    expect((await ownerOf(tokenId)).toLowerCase()).toBe(contracts.lendingVaultAddress.toLowerCase());

    const twice = await write({ kind: 'WRITE_OFF_LOAN', ref: loanRef });
    expect(twice.status).toBe('reverted');
    expect(await reader.refusalReason(twice.txHash)).toBe('LoanNotActive');
    const cancel = await write({ kind: 'CANCEL_LOAN', ref: loanRef });
    expect(await reader.refusalReason(cancel.txHash)).toBe('LoanNotActive');
    // The token stays collateral of the written-off loan: no new loan on it.
    const relock = await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', 5), tokenId, principalUsdMicro: 50n * USDC });
    expect(await reader.refusalReason(relock.txHash)).toBe('TokenLocked');
    expect(await reader.state()).toEqual(after);
  });

  describe('on a fresh vault (first deposits)', () => {
    let fresh: DeployedContracts;
    let freshLedger: EvmLedger;
    let freshReader: EvmVaultReader;
    let attackerKey: Hex;
    const writeFresh = async (call: VaultCall) => {
      const { txHash } = await freshLedger.vaultCallKept(call, keep);
      return { txHash, status: (await freshLedger.waitForReceipt(txHash, 10_000))?.status };
    };
    const donate = async (amount: bigint) => {
      const attacker = createWalletClient({
        account: privateKeyToAccount(attackerKey),
        chain: ledgerChain(CHAIN_ID, rpcUrl),
        transport: http(rpcUrl),
      });
      const tx = await attacker.writeContract({
        address: fresh.vaultAssetAddress,
        abi: testUsdcAbi,
        functionName: 'transfer',
        args: [fresh.lendingVaultAddress, amount],
      });
      expect((await client().waitForTransactionReceipt({ hash: tx })).status).toBe('success');
    };

    beforeEach(async () => {
      // A vault of its own per test: the attack needs an empty vault.
      fresh = await deployContracts({ rpcUrl, chainId: CHAIN_ID, deployerKey: operatorKey, artifacts: await compileContracts() });
      attackerKey = generatePrivateKey();
      await fundAccount(rpcUrl, privateKeyToAccount(attackerKey).address, 10n ** 20n);
      await setUpLocalVaultAccounts({
        rpcUrl,
        chainId: CHAIN_ID,
        adminKey: operatorKey,
        testUsdcAddress: fresh.vaultAssetAddress,
        buyerAddress: privateKeyToAccount(attackerKey).address,
        buyerUsdcMicro: 10_000n * USDC,
        onRampAddress: privateKeyToAccount(generatePrivateKey()).address,
      });
      const wallet = createWalletClient({
        account: privateKeyToAccount(operatorKey),
        chain: ledgerChain(CHAIN_ID, rpcUrl),
        transport: http(rpcUrl),
      });
      const minted = await wallet.writeContract({
        address: fresh.vaultAssetAddress,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [operator, 10_000n * USDC],
      });
      await client().waitForTransactionReceipt({ hash: minted });
      freshLedger = new EvmLedger({ rpcUrl, chainId: CHAIN_ID, signerPrivateKey: operatorKey, retryCount: 0, ...fresh });
      freshReader = new EvmVaultReader({ rpcUrl, chainId: CHAIN_ID, lendingVaultAddress: fresh.lendingVaultAddress, retryCount: 0 });
    }, 60_000);

    it('shares have 12 decimals (a decimals offset of 6 over the asset); the first deposit is priced 1 USDC a share', async () => {
      expect(await client().readContract({ address: fresh.lendingVaultAddress, abi: lendingVaultAbi, functionName: 'decimals' })).toBe(12);
      expect(
        await client().readContract({ address: fresh.lendingVaultAddress, abi: lendingVaultAbi, functionName: 'DECIMALS_OFFSET' }),
      ).toBe(6);
      const dep = await writeFresh({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 30), mfiId: mfiA, assetsUsdMicro: 10n * USDC });
      expect(await freshReader.writeResult(dep.txHash)).toEqual({ shares: 10n * SHARE, assetsUsdMicro: 10n * USDC });
    });

    it('a deposit that would mint 0 shares is refused (ZeroShares): mined reverted, nothing taken, the reference still free', async () => {
      // 1 USDC given to the empty vault: 1 micro-USDC would now buy 1 × 10^6 / (10^6 + 1) = 0 share units.
      await donate(1n * USDC);
      const treasuryBefore = await client().readContract({
        address: fresh.vaultAssetAddress,
        abi: testUsdcAbi,
        functionName: 'balanceOf',
        args: [operator],
      });
      const dust = await writeFresh({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 31), mfiId: mfiA, assetsUsdMicro: 1n });
      expect(dust.status).toBe('reverted');
      expect(await freshReader.refusalReason(dust.txHash)).toBe('ZeroShares');
      expect(await freshReader.writeResult(dust.txHash)).toBeNull();
      expect(
        await client().readContract({ address: fresh.vaultAssetAddress, abi: testUsdcAbi, functionName: 'balanceOf', args: [operator] }),
      ).toBe(treasuryBefore);
      expect((await freshReader.state()).total_shares).toBe(0n);
      // The standard entry point refuses it too (simulated).
      await expect(
        client().simulateContract({
          account: privateKeyToAccount(operatorKey),
          address: fresh.lendingVaultAddress,
          abi: lendingVaultAbi,
          functionName: 'deposit',
          args: [1n, operator],
        }),
      ).rejects.toThrow(/ZeroShares/);
      // A real amount under the same reference goes through (the refused one changed nothing).
      expect((await writeFresh({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 31), mfiId: mfiA, assetsUsdMicro: 5n * USDC })).status).toBe(
        'success',
      );
    });

    it("inflation attack: 1 micro-USDC deposited for the attacker, then 1,000 USDC donated to the vault; the victim's 1,000 USDC deposit still gets fair shares and the attacker loses money", async () => {
      const attackerMfi = `MFI-ATTACKER-${run}`;
      const victimMfi = `MFI-VICTIM-${run}`;
      expect((await writeFresh({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 40), mfiId: attackerMfi, assetsUsdMicro: 1n })).status).toBe(
        'success',
      );
      await donate(1_000n * USDC);
      const victim = await writeFresh({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 41), mfiId: victimMfi, assetsUsdMicro: 1_000n * USDC });
      expect(victim.status).toBe('success');
      const minted = (await freshReader.writeResult(victim.txHash))!.shares!;
      expect(minted).toBeGreaterThan(0n);
      const v = await freshReader.mfiPosition(victimMfi);
      const a = await freshReader.mfiPosition(attackerMfi);
      // The victim keeps all but a rounding dust of its deposit (0.00025 USDC here); without the
      // offset it would be left 666.67 USDC, the attacker taking the rest.
      expect(v.value_usd_micro).toBeGreaterThanOrEqual(999_990_000n);
      expect(v.value_usd_micro).toBeLessThanOrEqual(1_000n * USDC);
      // The attacker cannot take the victim's USDC: it gets back less than the 1,000.000001 USDC it put in.
      expect(a.value_usd_micro).toBeLessThan(1_000n * USDC + 1n);
      expect(v.shares).toBeGreaterThan(a.shares);
    });
  });

  it('only the operator moves money: the standard ERC-4626 entry points and the operator functions refuse anyone else', async () => {
    const stranger = privateKeyToAccount(buyerKey);
    const sim = (functionName: 'deposit' | 'openLoan', args: readonly unknown[]) =>
      client().simulateContract({
        account: stranger,
        address: contracts.lendingVaultAddress,
        abi: lendingVaultAbi,
        functionName,
        args,
      } as never);
    await expect(sim('deposit', [1n, stranger.address])).rejects.toThrow(/OperatorOnly/);
    await expect(sim('openLoan', [vaultRef(ref('LOAN', 8)), 1n, 1n])).rejects.toThrow(/AccessControlUnauthorizedAccount/);
  });
});
