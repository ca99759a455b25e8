import { getAbiItem, type Hex } from 'viem';
import { getLogs, readContract } from 'viem/actions';
import type { AnchoredRootLookup, AnchorRootReader } from '../../domain/ports/audit';
import { auditAnchorAbi } from './abi';
import { ledgerReadClient, ledgerReadConfigFromEnv, ledgerUnavailable, type LedgerReadConfig } from './read-config';

/**
 * Reads AuditAnchor (docs/api/anchoring.md#anchoring-of-the-audit-log), no signing key: `anchoredAtBlock(root)` — the block a Merkle
 * root of audit heads was anchored at, null when never. The chain id is checked once.
 * Errors: LedgerUnavailableError when the RPC fails or reports another chain.
 */
export function auditAnchorReader(config: LedgerReadConfig): AnchorRootReader {
  const { client, checkChain } = ledgerReadClient(config, 'auditAnchorReader');
  return async (root: Hex) => {
    await checkChain();
    try {
      const block = await readContract(client, {
        address: config.address,
        abi: auditAnchorAbi,
        functionName: 'anchoredAtBlock',
        args: [root],
      });
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

/**
 * Where a root stands on AuditAnchor (the single ledger writer, for an anchor whose root the chain
 * already holds): `anchoredAtBlock(root)`, and the transaction of that block whose
 * `AuditRootAnchored(root)` event anchored it. Null when never anchored. Errors:
 * LedgerUnavailableError when the RPC fails, or the block holds no such event (a node that pruned
 * its logs: the write is retried, then parked for an operator).
 */
export function auditAnchorLookup(config: LedgerReadConfig): AnchoredRootLookup {
  const read = auditAnchorReader(config);
  const { client } = ledgerReadClient(config, 'auditAnchorLookup');
  const event = getAbiItem({ abi: auditAnchorAbi, name: 'AuditRootAnchored' });
  return async (root: Hex) => {
    const block = await read(root);
    if (block === null) return null;
    let logs;
    try {
      logs = await getLogs(client, { address: config.address, event, args: { root }, fromBlock: block, toBlock: block });
    } catch (err) {
      throw ledgerUnavailable(err, 'eth_getLogs AuditRootAnchored');
    }
    const txHash = logs[0]?.transactionHash;
    if (!txHash)
      throw ledgerUnavailable(
        new Error(`root ${root} is anchored at block ${block}, and that block has no AuditRootAnchored event for it`),
        'eth_getLogs AuditRootAnchored',
      );
    return { block_number: Number(block), tx_hash: txHash };
  };
}

/** An `auditAnchorLookup` from LEDGER_RPC_URL, LEDGER_CHAIN_ID, AUDIT_ANCHOR_ADDRESS (required) and LEDGER_RPC_RETRY_COUNT. */
export function auditAnchorLookupFromEnv(env: Record<string, string | undefined> = process.env): AnchoredRootLookup {
  return auditAnchorLookup(ledgerReadConfigFromEnv(env, 'AUDIT_ANCHOR_ADDRESS'));
}
