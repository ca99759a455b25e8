import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createPublicClient, http } from 'viem';
import { ledgerSignerKey } from '../../infra/local/dev-keys';
import { AuditAnchorRepository } from '../../shared/adapters/dynamodb/anchor-repo';
import { transactWithAudit } from '../../shared/adapters/dynamodb/audit-append';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { documentClient, tableName } from '../../shared/adapters/dynamodb/table';
import { auditAnchorAbi } from '../../shared/adapters/ledger/abi';
import { DEFAULT_ANCHOR_INTERVAL_S } from '../../shared/domain/anchoring';
import { GENESIS_HASH } from '../../shared/domain/audit';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import { runAnchor } from '../../shared/use-cases/anchoring';
import { writeLedgerTx } from '../../shared/use-cases/ledger-writer';
import { startStackProcess } from '../support/stack-process';
import { localTableEnv } from '../../infra/local/dynamodb-local';

/**
 * Anchoring benchmark (issue 13): 1,000 batches with 5 audit entries each, written through the
 * real append path (each append's pending marker in its DynamoDB transaction) on the local stack's
 * DynamoDB Local, then ONE run of the audit-anchorer and the single ledger writer landing its
 * AuditAnchor transaction on the stack's hardhat node. Reports the anchor transactions per hour (one
 * per ANCHOR_INTERVAL_S whatever the number of batches), the gas of the anchor and per anchored
 * entry, and how long building and settling took. The stack's own anchorer and reconciler are
 * held off so this process is the only signer while it runs.
 * Knobs: BENCH_ANCHOR_BATCHES (1000), BENCH_ANCHOR_ENTRIES (5).
 */
const BATCHES = Number(process.env.BENCH_ANCHOR_BATCHES ?? 1000);
const ENTRIES = Number(process.env.BENCH_ANCHOR_ENTRIES ?? 5);
const say = (l: string) => process.stdout.write(`${l}\n`);

export async function anchoringBench(): Promise<void> {
  say(`\nAnchoring: ${BATCHES} batches × ${ENTRIES} audit entries, one periodic anchor`);
  const stack = await startStackProcess({ ANCHOR_INTERVAL_S: '100000000', RECONCILE_AFTER_SECONDS: '100000000' });
  try {
    const e = stack.info.endpoints;
    Object.assign(process.env, {
      ...localTableEnv(e.dynamodb!),
      LEDGER_RPC_URL: e.ledger,
      LEDGER_CHAIN_ID: '31337',
      LEDGER_SIGNER_KEY: ledgerSignerKey(stack.info.dataDir),
      LEDGER_RPC_RETRY_COUNT: '0',
      BATCH_TOKEN_ADDRESS: e.batch_token,
      TRACE_LOG_ADDRESS: e.trace_log,
      AUDIT_ANCHOR_ADDRESS: e.audit_anchor,
    });
    // Import after the environment is set: the composition reads it when it builds the ledger.
    const { ledgerWriterDeps } = await import('../../shared/composition/ledger');

    const ids = Array.from({ length: BATCHES }, (_, i) => `BATCH-2031-${String(i + 1).padStart(6, '0')}`);
    for (const id of ids) {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.batch(id), entity: 'BENCH_BATCH', batch_id: id, audit_seq: 0, audit_head_hash: GENESIS_HASH },
        }),
      );
    }
    const types = ['PAYOUT_PROCESSING', 'PAYMENT_CONFIRMED', 'PURCHASE_ORDER_CREATED', 'PURCHASE_ORDER_CONFIRMED', 'DDS_GENERATED'];
    const tWrite = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          for (let k = 0; k < ENTRIES; k++) {
            await transactWithAudit({
              batchId: id,
              items: [],
              entry: { type: types[k % types.length]!, at: new Date().toISOString(), actor: 'bench', payload: { n: k } },
            });
          }
        }
      }),
    );
    const writeS = (performance.now() - tWrite) / 1000;
    say(`  wrote ${BATCHES * ENTRIES} audit entries (each with its pending-anchor marker) in ${writeS.toFixed(1)} s`);

    const queued: LedgerWriteMessage[] = [];
    const anchors = new AuditAnchorRepository();
    const tBuild = performance.now();
    const run = await runAnchor({
      anchors,
      custody: new CustodyRepository(),
      ledgerQueue: { send: async (m) => void queued.push(m) },
      now: () => new Date(),
    });
    const buildMs = performance.now() - tBuild;
    if (run.outcome !== 'OPENED') throw new Error(`the anchorer did not open an anchor: ${JSON.stringify(run)}`);
    say(
      `  anchorer: ${run.markers} markers → ${run.heads} heads → root ${run.root.slice(0, 12)}… in ${buildMs.toFixed(0)} ms (read, tree, stored); ${queued.length} ledger write queued`,
    );

    const tLand = performance.now();
    await writeLedgerTx(ledgerWriterDeps(), run.anchor_id, 60_000);
    const landMs = performance.now() - tLand;
    const anchor = await anchors.get(run.anchor_id);
    if (anchor?.status !== 'ANCHORED' || !anchor.tx_hash) throw new Error(`the anchor is ${anchor?.status}, not ANCHORED`);
    say(
      `  single ledger writer: AuditAnchor.anchor mined in block ${anchor.block_number}, then ${BATCHES} proofs stored and ${run.markers} markers settled, in ${(landMs / 1000).toFixed(1)} s`,
    );

    const client = createPublicClient({ transport: http(e.ledger) });
    const receipt = await client.getTransactionReceipt({ hash: anchor.tx_hash as `0x${string}` });
    // Every batch's proof checks on chain (a sample of 20: isAnchoredHead is a view call).
    for (const id of ids.filter((_, i) => i % Math.max(1, Math.floor(BATCHES / 20)) === 0)) {
      const [a] = await anchors.ofBatch(id);
      const ok = await client.readContract({
        address: e.audit_anchor as `0x${string}`,
        abi: auditAnchorAbi,
        functionName: 'isAnchoredHead',
        args: [a!.root, a!.proof, id, BigInt(a!.head_sequence_number), `0x${a!.head_hash}`],
      });
      if (!ok || a!.head_sequence_number !== ENTRIES) throw new Error(`${id}: its anchor does not check on chain`);
    }
    const gas = Number(receipt.gasUsed);
    const perHour = 3600 / DEFAULT_ANCHOR_INTERVAL_S;
    say(
      `  anchor transactions per hour: ${perHour} (one per ANCHOR_INTERVAL_S = ${DEFAULT_ANCHOR_INTERVAL_S} s, whatever the number of batches: these ${BATCHES} batches took 1)`,
    );
    say(`  gas of the anchor: ${gas.toLocaleString('en-US')} (one SSTORE and one event, independent of the number of heads)`);
    say(
      `  gas per anchored entry: ${(gas / (BATCHES * ENTRIES)).toFixed(2)} (per batch head: ${(gas / BATCHES).toFixed(1)}); proofs of ${anchor.heads.length} heads are ${Math.ceil(Math.log2(anchor.heads.length))} hashes deep, verified on chain for a sample of 20`,
    );
  } finally {
    await stack.stop();
  }
}
