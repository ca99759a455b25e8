import { loadavg } from 'node:os';
import { createServiceTable, localTableEnv, LOCAL_TABLE_NAME, startDynamoDbLocal } from '../../infra/local/dynamodb-local';
import { seedOrderBatches, timeOrderCreation } from '../support/order-batches';

/**
 * Creating a purchase order of many batches (`BENCH_ONLY=po-create npm run bench`,
 * docs/api/batches-and-custody.md#purchase-orders-of-many-batches): on its own DynamoDB Local (no
 * stack), BENCH_PO_SIZES (default 500,1000,2000) batches of one cooperative, seeded straight in the
 * table in the state creation needs (minted, on no order), then what POST /purchase-orders runs
 * (`createPurchaseOrder` with the function's repositories) timed to its answer, and on to the
 * order DRAFT as the order worker's runs bind its batches (test/support/order-batches.ts),
 * BENCH_PO_ROUNDS times per size (default 1, each on fresh batches). The machine's load averages
 * are printed beside each figure.
 */

const say = (l: string) => process.stdout.write(`${l}\n`);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export async function purchaseOrderCreationBench(): Promise<void> {
  const sizes = (process.env.BENCH_PO_SIZES ?? '500,1000,2000').split(',').map(Number);
  const rounds = Number(process.env.BENCH_PO_ROUNDS ?? 1);
  say('Purchase order creation on DynamoDB Local (POST /purchase-orders use case and repositories, then the order worker):');
  const ddb = await startDynamoDbLocal();
  try {
    Object.assign(process.env, localTableEnv(ddb.endpoint));
    await createServiceTable(ddb.endpoint, LOCAL_TABLE_NAME);
    let next = 1;
    for (const n of sizes) {
      for (let r = 0; r < rounds; r++) {
        const ids = await seedOrderBatches(ddb.endpoint, next, n);
        next += n;
        const before = load();
        const { answerMs, boundMs, answer, po, runs } = await timeOrderCreation(ids);
        say(
          `  ${n} batches: answered ${answer.status} in ${(answerMs / 1000).toFixed(2)} s; ${po.status} ${(boundMs / 1000).toFixed(2)} s after the request (${runs} worker run(s)); load average ${before} before, ${load()} after`,
        );
      }
    }
  } finally {
    await ddb.stop();
  }
}
