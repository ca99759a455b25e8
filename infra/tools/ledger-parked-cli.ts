import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoChainEventParking } from '../../shared/adapters/dynamodb/chain-event-parking';
import { ledgerParkingRepo, ledgerWriterDeps } from '../../shared/composition/ledger';
import { custodyRepo, ledgerWriteQueue } from '../../shared/composition/platform';
import { QUEUES } from '../../shared/manifest';
import { localDataDir } from '../local/dev-keys';
import { localTableEnv } from '../local/dynamodb-local';
import { LOCAL_QUEUES } from '../local/stack';
import { discardParkedWrite, oldestPendingLedgerWriteAgeSeconds, retryParkedWrite } from '../../shared/use-cases/ledger-writer';

const USAGE = `usage: npm run ledger-parked -- <command>
  list                          parked ledger writes (and parked chain events), oldest first,
                                with the age of the oldest open ledger write
  retry <ledger_tx_id>          open a parked write again and queue it for the single writer
                                (its kept signed transaction, if any, is re-sent as is)
  discard <ledger_tx_id> [why]  settle a parked write as refused (a mint's batch FAILED, a stage
                                record's job FAILED, a deposit or loan told, an anchor abandoned)
  discard-event <event_id> [why]  take a parked chain event off the list (after settling it by hand)
Against the local stack ($LOCAL_DATA_DIR/stack.json, default .local) when TABLE_NAME is unset;
against a deployed stack with TABLE_NAME and AWS credentials and region in the environment, plus
LEDGER_WRITE_QUEUE_URL (retry: without it the write is queued by the next ledger-write reconciler
run), LEDGER_CHAIN_ID (chain events), and for discard the ledger writer's PAYOUT_REQUEST_QUEUE_URL,
AUDIT_ANCHOR_ADDRESS and LENDING_VAULT_ADDRESS (copy them from the ledger-writer function).`;

/**
 * `npm run ledger-parked`: the operator's view of the single ledger writer's parked writes (docs/operations.md#parked-ledger-writes): lists them, retries one (open again, queued), or discards one (its
 * cause settled as refused). Exit code 0 when done, 1 on an error, 2 usage error.
 */
async function main(): Promise<number> {
  const [command, id, ...why] = process.argv.slice(2);
  if (!command || !['list', 'retry', 'discard', 'discard-event'].includes(command) || (command !== 'list' && !id)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  await configure();
  const now = () => new Date();
  if (command === 'list') {
    const parked = await ledgerParkingRepo().parked(500);
    const age = await oldestPendingLedgerWriteAgeSeconds({ parking: ledgerParkingRepo(), now });
    process.stdout.write(`oldest open ledger write: ${age} s\nparked ledger writes: ${parked.length}\n`);
    for (const tx of parked) {
      const what =
        tx.kind === 'VAULT'
          ? `${tx.kind} ${tx.vault_call.kind} ${tx.vault_call.ref}`
          : tx.kind === 'ANCHOR'
            ? `ANCHOR root ${tx.root}`
            : `${tx.kind} ${tx.batch_id}`;
      process.stdout.write(
        `  ${tx.ledger_tx_id}  ${what}  parked ${tx.parked_at}  attempts ${tx.attempts ?? 0}${tx.tx_hash ? `  tx ${tx.tx_hash}` : ''}\n    ${tx.failure ?? ''}\n`,
      );
    }
    if (process.env.LEDGER_CHAIN_ID) {
      const events = await new DynamoChainEventParking(Number(process.env.LEDGER_CHAIN_ID)).parked(500);
      process.stdout.write(`parked chain events: ${events.length}\n`);
      for (const e of events)
        process.stdout.write(
          `  ${e.event_id}  parked ${e.parked_at}  attempts ${e.attempts}\n    ${e.reason}\n    ${JSON.stringify(e.event)}\n`,
        );
    }
    return 0;
  }
  if (command === 'retry') {
    const queued = Boolean(process.env.LEDGER_WRITE_QUEUE_URL);
    const queue = queued ? ledgerWriteQueue() : { send: async () => undefined };
    const open = await retryParkedWrite({ custody: custodyRepo(), parking: ledgerParkingRepo(), ledgerQueue: queue, now }, id!);
    process.stdout.write(
      `${id}: open again (${open.status})${queued ? ', queued for the ledger writer' : '; the next ledger-write reconciler run queues it'}\n`,
    );
    return 0;
  }
  if (command === 'discard') {
    await discardParkedWrite({ ...ledgerWriterDeps(), parking: ledgerParkingRepo() }, id!, why.join(' ') || 'no reason given');
    process.stdout.write(`${id}: discarded, its cause settled as refused\n`);
    return 0;
  }
  if (!process.env.LEDGER_CHAIN_ID) throw new Error('set LEDGER_CHAIN_ID');
  const done = await new DynamoChainEventParking(Number(process.env.LEDGER_CHAIN_ID)).discard(
    id!,
    why.join(' ') || 'no reason given',
    new Date().toISOString(),
  );
  process.stdout.write(done ? `${id}: taken off the parked events\n` : `${id}: not a parked event\n`);
  return done ? 0 : 1;
}

/** The local stack's table, queues and contracts when TABLE_NAME is unset (from its stack.json). */
async function configure(): Promise<void> {
  if (process.env.TABLE_NAME) return;
  const file = join(localDataDir(), 'stack.json');
  if (!existsSync(file)) throw new Error(`set TABLE_NAME (a deployed stack), or start the local stack (${file} not found)`);
  const stack = JSON.parse(readFileSync(file, 'utf8')) as { endpoints: Record<string, string>; chain_id: number };
  Object.assign(process.env, localTableEnv(stack.endpoints.dynamodb!), {
    AWS_ENDPOINT_URL_SQS: stack.endpoints.sqs_sns,
    LEDGER_CHAIN_ID: String(stack.chain_id),
    AUDIT_ANCHOR_ADDRESS: stack.endpoints.audit_anchor,
    LENDING_VAULT_ADDRESS: stack.endpoints.lending_vault,
  });
  const sqs = new SQSClient({
    endpoint: stack.endpoints.sqs_sns,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  for (const q of ['ledger-write-queue', 'payout-request-queue'] as const) {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: `${LOCAL_QUEUES[q].name}${QUEUES[q].fifo ? '.fifo' : ''}` }));
    process.env[QUEUES[q].urlEnv] = QueueUrl!;
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`ledger-parked failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
