import { readContract } from 'viem/actions';
import type { AnchorRootReader, Hex } from '../../domain/ports';
import { auditAnchorAbi } from './abi';
import { ledgerReadClient, ledgerReadConfigFromEnv, ledgerUnavailable, type LedgerReadConfig } from './read-config';

/**
 * Reads AuditAnchor (decisions §13), no signing key: `anchoredAtBlock(root)` — the block a Merkle
 * root of audit heads was anchored at, null when never. The chain id is checked once.
 * Errors: LedgerUnavailableError when the RPC fails or reports another chain.
 */
export function auditAnchorReader(config: LedgerReadConfig): AnchorRootReader {
  const { client, checkChain } = ledgerReadClient(config, 'auditAnchorReader');
  return async (root: Hex) => {
    await checkChain();
    try {
      const block = await readContract(client, { address: config.address, abi: auditAnchorAbi, functionName: 'anchoredAtBlock', args: [root] });
      return block === 0n ? null : block;
    } catch (err) {
      throw ledgerUnavailable(err, 'anchoredAtBlock');
    }
  };
}

/** An `auditAnchorReader` from LEDGER_RPC_URL, LEDGER_CHAIN_ID, AUDIT_ANCHOR_ADDRESS (required) and LEDGER_RPC_RETRY_COUNT. */
export function auditAnchorReaderFromEnv(env: Record<string, string | undefined> = process.env): AnchorRootReader {
  return auditAnchorReader(ledgerReadConfigFromEnv(env, 'AUDIT_ANCHOR_ADDRESS'));
}
