import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createPublicClient, createWalletClient, http, isAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { lendingVaultAbi, testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { vaultRef } from '../../shared/adapters/ledger/vault-ledger';
import { amountDueUsdMicro } from '../../shared/domain/lending';
import { decimalStringToMicro, microToDecimalString } from '../../shared/domain/money';
import { devBuyerKey, localDataDir } from './dev-keys';
import { localTableEnv } from './dynamodb-local';

/**
 * `npm run -s buyer-pay -- PO-… [--amount USDC]` (docs/api/settlement.md#settlement): on the local chain, the dev
 * buyer (its key in $LOCAL_DATA_DIR/dev-buyer.key, funded with TestUSDC by `npm start`) pays the
 * purchase order into the lending vault as a buyer would: `approve(vault, amount)` on the USDC,
 * then `payPurchaseOrder(bytes32("PO-…"), amount)`. Without --amount it pays the purchase order's
 * amount due (`amount_due_usdc`: Σ over its batches of the MILLED outturn_kg × price_usd_per_kg,
 * micro-USDC rounded down per batch), read from the running local stack's table. With --amount it
 * pays any amount (a dust payment, a part payment): the order settles only once its buyer's
 * payments reach the amount due (docs/api/settlement.md#settlement). The stack is found through
 * $LOCAL_DATA_DIR/stack.json (written by `npm start`). Prints the payment's transaction hash on
 * stdout (what it did on stderr). Exit code: 0 paid, 1 failed, 2 usage error.
 */

const USAGE = `usage: npm run -s buyer-pay -- <PURCHASE_ORDER_ID> [--amount USDC]
  --amount USDC   the amount to pay, in USDC (up to 6 decimals), e.g. 0.000001 for a dust
                  payment; default: the purchase order's amount due (sum of its batches'
                  milled outturn_kg × price_usd_per_kg)
The local stack (npm start) must be running; LOCAL_DATA_DIR defaults to .local in the repository.`;

class UsageError extends Error {}

interface StackFile {
  chain_id?: number;
  endpoints?: { ledger?: string; dynamodb?: string; lending_vault?: string; vault_asset?: string };
}

type Out = (line: string) => void;

/** Runs the command with `argv` (the arguments after the script name); returns the exit code. Never throws. */
export async function runBuyerPay(argv: string[], out: Out, err: Out, dataDir = localDataDir()): Promise<number> {
  try {
    const txHash = await pay(argv, err, dataDir);
    out(txHash);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err(`buyer-pay: ${e.message}`);
      err(USAGE);
      return 2;
    }
    err(`buyer-pay: ${(e as Error).message}`);
    return 1;
  }
}

async function pay(argv: string[], log: Out, dataDir: string): Promise<Hex> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { amount: { type: 'string' } } });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const [purchaseOrderId, ...rest] = parsed.positionals;
  if (!purchaseOrderId || rest.length > 0) throw new UsageError('give exactly one purchase order id');
  if (!/^PO-[A-Za-z0-9-]{1,29}$/.test(purchaseOrderId)) throw new UsageError(`not a purchase order id: ${purchaseOrderId}`);
  let amount: bigint | undefined;
  if (parsed.values.amount !== undefined) {
    let micro: number;
    try {
      micro = decimalStringToMicro(parsed.values.amount);
    } catch {
      throw new UsageError(`--amount must be a USDC amount with at most 6 decimals, got ${parsed.values.amount}`);
    }
    if (micro <= 0) throw new UsageError('--amount must be greater than 0');
    amount = BigInt(micro);
  }

  const stackFile = join(dataDir, 'stack.json');
  if (!existsSync(stackFile)) throw new Error(`no ${stackFile}: start the local stack first (npm start)`);
  const stack = JSON.parse(readFileSync(stackFile, 'utf8')) as StackFile;
  const rpcUrl = stack.endpoints?.ledger;
  const vault = stack.endpoints?.lending_vault;
  const asset = stack.endpoints?.vault_asset;
  if (!rpcUrl || !vault || !asset || !isAddress(vault) || !isAddress(asset)) {
    throw new Error(`${stackFile} names no ledger, lending_vault and vault_asset (restart the local stack)`);
  }

  amount ??= await purchaseOrderValue(purchaseOrderId, stack.endpoints?.dynamodb);

  const chain = ledgerChain(Number(stack.chain_id ?? 31337), rpcUrl);
  const transport = http(rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(devBuyerKey(dataDir));
  const reader = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });
  const balance = await reader.readContract({ address: asset, abi: testUsdcAbi, functionName: 'balanceOf', args: [account.address] });
  if (balance < amount) throw new Error(`the buyer ${account.address} holds ${usdc(balance)} USDC, less than ${usdc(amount)}`);

  const approveTx = await wallet.writeContract({ address: asset, abi: testUsdcAbi, functionName: 'approve', args: [vault, amount] });
  const approved = await reader.waitForTransactionReceipt({ hash: approveTx, timeout: 60_000 });
  if (approved.status !== 'success') throw new Error(`approve ${approveTx} reverted`);
  const payTx = await wallet.writeContract({
    address: vault,
    abi: lendingVaultAbi,
    functionName: 'payPurchaseOrder',
    args: [vaultRef(purchaseOrderId), amount],
  });
  const paid = await reader.waitForTransactionReceipt({ hash: payTx, timeout: 60_000 });
  if (paid.status !== 'success') throw new Error(`payPurchaseOrder ${payTx} reverted`);
  log(`buyer ${account.address} paid ${usdc(amount)} USDC for ${purchaseOrderId} into the vault ${vault} (block ${paid.blockNumber})`);
  return payTx;
}

/** The purchase order's amount due from the local table: recorded on it, else `amountDueUsdMicro` of its batches' outturn. */
async function purchaseOrderValue(purchaseOrderId: string, dynamodbEndpoint: string | undefined): Promise<bigint> {
  if (!dynamodbEndpoint) throw new Error('stack.json names no DynamoDB endpoint; give --amount');
  Object.assign(process.env, localTableEnv(dynamodbEndpoint));
  const { CustodyRepository } = await import('../../shared/adapters/dynamodb/custody-repo');
  const { BatchRepository } = await import('../../shared/adapters/dynamodb/batch-repo');
  const po = await new CustodyRepository().getPurchaseOrder(purchaseOrderId);
  if (!po) throw new Error(`no purchase order ${purchaseOrderId} in the local stack`);
  let due = po.amount_due_usd_micro ?? null;
  if (due === null) {
    const batches = new BatchRepository();
    const found = await Promise.all(po.batch_ids.map((id) => batches.get(id)));
    const missing = po.batch_ids.filter((_, i) => !found[i]);
    if (missing.length) throw new Error(`purchase order ${purchaseOrderId} names batch ${missing.join(', ')}, which does not exist`);
    due = amountDueUsdMicro(
      found.map((b) => ({ outturn_kg: b!.outturn_kg })),
      po.price_usd_per_kg,
    );
  }
  if (due === null) throw new Error(`purchase order ${purchaseOrderId} has no amount due yet (a batch is not milled); give --amount`);
  if (due <= 0) throw new Error(`purchase order ${purchaseOrderId} has no value to pay; give --amount`);
  return BigInt(due);
}

function usdc(micro: bigint): string {
  return microToDecimalString(Number(micro));
}

// Run as a script: `npm run -s buyer-pay -- PO-… [--amount USDC]`.
if (process.argv[1]?.endsWith('buyer-pay.ts')) {
  runBuyerPay(
    process.argv.slice(2),
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
  ).then((code) => {
    process.exitCode = code;
  });
}
