import { createPublicClient, createTestClient, createWalletClient, http, type Abi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from '../../shared/domain/ports';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import type { CompiledContracts } from './compile';

/** Addresses of the deployed ledger contracts. */
export interface DeployedContracts {
  batchTokenAddress: Hex;
  traceLogAddress: Hex;
}

/**
 * Deploys BatchToken and TraceLog from `artifacts` (see `compileContracts`) with `deployerKey`,
 * which thereby holds DEFAULT_ADMIN_ROLE, MINTER_ROLE and RECORDER_ROLE. Both transactions are
 * sent back to back (consecutive nonces) and their receipts awaited (timeout 60 s each).
 * Throws when a deployment reverts, has no contract address, or the RPC fails (viem errors).
 */
export async function deployContracts(input: {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  artifacts: CompiledContracts;
}): Promise<DeployedContracts> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(input.deployerKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });

  let nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const send = (name: keyof CompiledContracts) =>
    wallet.deployContract({ abi: input.artifacts[name].abi as Abi, bytecode: input.artifacts[name].bytecode, nonce: nonce++ });
  const batchTokenTx = await send('BatchToken');
  const traceLogTx = await send('TraceLog');

  const addressOf = async (name: string, hash: Hex): Promise<Hex> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`Deployment of ${name} failed (tx ${hash}, status ${receipt.status})`);
    }
    return receipt.contractAddress;
  };
  const [batchTokenAddress, traceLogAddress] = await Promise.all([
    addressOf('BatchToken', batchTokenTx),
    addressOf('TraceLog', traceLogTx),
  ]);
  return { batchTokenAddress, traceLogAddress };
}

/**
 * Sets the balance of `address` to `wei` with `hardhat_setBalance`: local hardhat node only
 * (any other node rejects the method, and the viem error is thrown).
 */
export async function fundAccount(rpcUrl: string, address: Hex, wei: bigint): Promise<void> {
  const testClient = createTestClient({ mode: 'hardhat', transport: http(rpcUrl, { retryCount: 1 }) });
  await testClient.setBalance({ address, value: wei });
}
