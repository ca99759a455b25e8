import { randomBytes } from 'node:crypto';
import { createPublicClient, http, maxUint256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { devBuyerKey, devOnRampKey, ledgerSignerKey } from '../../infra/local/dev-keys';
import { batchTokenAbi, lendingVaultAbi, testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { createVaultLedgerFromEnv } from '../../shared/adapters/ledger/evm-ledger-env';
import { EvmVaultReader, createVaultReaderFromEnv } from '../../shared/adapters/ledger/vault-reader';
import { api, stackDataDir, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * The local stack's own lending vault (read-only checks of what `npm start` deployed) and
 * `npm run buyer-pay` paying into it. The vault's flows on a deployment of their own are in
 * vault.int.test.ts.
 */

const CHAIN_ID = 31337;
const run = randomBytes(4).toString('hex').toUpperCase();

interface StackJson {
  endpoints: Record<string, string>;
  chain_id: number;
}
const stackJson = (): StackJson => localStack();

describe("the local stack's lending vault", () => {
  const client = () => {
    const rpcUrl = stackJson().endpoints.ledger!;
    return createPublicClient({ chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
  };

  it('the local stack deployed the vault: env names, operator roles and approvals, the funded buyer and the on-ramp minter', async () => {
    const { endpoints } = stackJson();
    const dataDir = stackDataDir();
    const signer = privateKeyToAccount(ledgerSignerKey(dataDir)).address;
    const vault = endpoints.lending_vault as Hex;
    const asset = endpoints.vault_asset as Hex;
    const c = client();
    expect((await c.readContract({ address: vault, abi: lendingVaultAbi, functionName: 'asset' })).toLowerCase()).toBe(asset.toLowerCase());
    expect((await c.readContract({ address: vault, abi: lendingVaultAbi, functionName: 'batchToken' })).toLowerCase()).toBe(
      endpoints.batch_token!.toLowerCase(),
    );
    const operatorRole = await c.readContract({ address: vault, abi: lendingVaultAbi, functionName: 'OPERATOR_ROLE' });
    expect(await c.readContract({ address: vault, abi: lendingVaultAbi, functionName: 'hasRole', args: [operatorRole, signer] })).toBe(
      true,
    );
    expect(await c.readContract({ address: asset, abi: testUsdcAbi, functionName: 'allowance', args: [signer, vault] })).toBe(maxUint256);
    expect(
      await c.readContract({
        address: endpoints.batch_token as Hex,
        abi: batchTokenAbi,
        functionName: 'isApprovedForAll',
        args: [signer, vault],
      }),
    ).toBe(true);
    expect(await c.readContract({ address: asset, abi: testUsdcAbi, functionName: 'decimals' })).toBe(6);
    expect(await c.readContract({ address: asset, abi: testUsdcAbi, functionName: 'symbol' })).toBe('USDC');
    const minter = await c.readContract({ address: asset, abi: testUsdcAbi, functionName: 'MINTER_ROLE' });
    expect(
      await c.readContract({
        address: asset,
        abi: testUsdcAbi,
        functionName: 'hasRole',
        args: [minter, privateKeyToAccount(devOnRampKey(dataDir)).address],
      }),
    ).toBe(true);
    expect(
      await c.readContract({
        address: asset,
        abi: testUsdcAbi,
        functionName: 'balanceOf',
        args: [privateKeyToAccount(devBuyerKey(dataDir)).address],
      }),
    ).toBeGreaterThan(0n);

    const env = {
      LEDGER_RPC_URL: endpoints.ledger,
      LEDGER_CHAIN_ID: '31337',
      LENDING_VAULT_ADDRESS: vault,
      VAULT_ASSET_ADDRESS: asset,
      LEDGER_SIGNER_KEY: ledgerSignerKey(dataDir),
      BATCH_TOKEN_ADDRESS: endpoints.batch_token,
      TRACE_LOG_ADDRESS: endpoints.trace_log,
    };
    expect(createVaultLedgerFromEnv(env).signerAddress).toBe(signer);
    expect(() => createVaultLedgerFromEnv({ ...env, LENDING_VAULT_ADDRESS: '' })).toThrow(
      'Missing environment variable LENDING_VAULT_ADDRESS',
    );
    expect((await createVaultReaderFromEnv(env).state()).total_shares).toBeGreaterThanOrEqual(0n);
  });

  it("npm run buyer-pay pays a purchase order into the stack's vault from the dev buyer and prints the transaction hash", async () => {
    const { endpoints } = stackJson();
    const out: string[] = [];
    const err: string[] = [];
    const po = `PO-${run}BUYERPAY`;
    expect(
      await runBuyerPay(
        [po, '--amount', '12.5'],
        (l) => out.push(l),
        (l) => err.push(l),
        stackDataDir(),
      ),
    ).toBe(0);
    expect(out).toEqual([expect.stringMatching(/^0x[0-9a-f]{64}$/)]);
    const stackReader = new EvmVaultReader({
      rpcUrl: endpoints.ledger!,
      chainId: CHAIN_ID,
      lendingVaultAddress: endpoints.lending_vault as Hex,
    });
    const [payment] = await stackReader.purchaseOrderPaymentsInTx(out[0] as Hex);
    expect(payment).toMatchObject({
      purchaseOrderId: po,
      amountUsdMicro: 12_500_000n,
      payer: privateKeyToAccount(devBuyerKey(stackDataDir())).address,
    });
    expect(await stackReader.escrowOf(po)).toBe(12_500_000n);

    // Without --amount: the purchase order's amount due from the stack's table, Σ milled outturn_kg × price_usd_per_kg.
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop);
    const batchIds: string[] = [];
    for (const weight_kg of [120.5, 60.25]) {
      const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg }) });
      expect(submit.status).toBe(201);
      batchIds.push(submit.body.data.batch_id as string);
    }
    const created = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: { batch_ids: batchIds, buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 },
    });
    expect(created.status).toBe(201);
    const poId = created.body.purchase_order_id as string;
    // Its batches are not milled: no amount due yet (the default amount), so --amount is needed.
    expect(created.body.amount_due_usdc).toBeNull();
    expect(
      await runBuyerPay(
        [poId],
        () => undefined,
        (l) => err.push(l),
        stackDataDir(),
      ),
    ).toBe(1);
    expect(err.join('\n')).toContain(`purchase order ${poId} has no amount due yet`);
    // (The default amount once every batch is milled: test/integration/settlement.int.test.ts.)

    // Without --amount the purchase order must exist in the stack's table.
    expect(
      await runBuyerPay(
        [`PO-${run}MISSING`],
        () => undefined,
        (l) => err.push(l),
        stackDataDir(),
      ),
    ).toBe(1);
    expect(err.join('\n')).toContain(`no purchase order PO-${run}MISSING`);
    expect(
      await runBuyerPay(
        ['PO-1', '--amount', '1.2345678'],
        () => undefined,
        (l) => err.push(l),
        stackDataDir(),
      ),
    ).toBe(2);
  });
});
