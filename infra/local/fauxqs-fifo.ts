import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFauxqs } from 'fauxqs';
import { repoRoot } from '../../shared/runtime/paths';

/** The members of fauxqs's queue class this shim reads and wraps (fauxqs 1.9.2, dist/sqs/sqsStore.js). */
interface FauxqsQueue {
  fifoLockedGroups: Map<string, number>;
  dequeueFifo(maxCount: number, visibilityTimeoutOverride?: number, dlqResolver?: unknown): unknown[];
}

let installed = false;

/**
 * Makes fauxqs hand out FIFO batches as SQS does. SQS answers a ReceiveMessage on a FIFO queue with
 * up to `MaxNumberOfMessages` messages, several of one message group in queue order, and hands out
 * no further message of a group while any of it is in flight; fauxqs (1.9.2, also 2.4.1) hands out
 * at most ONE message per group per receive, so a consumer with a batch size above 1 (the single
 * ledger writer: docs/ledger.md#batches-of-queue-messages) would never see more than one message
 * of a group locally. Wraps fauxqs's FIFO dequeue: after each pass, the groups it locked in this
 * receive are unlocked for the next pass (only they: a group in flight from an earlier receive
 * stays locked), until `maxCount` messages or nothing more; their lock counts are restored, so
 * each group stays locked until every message handed out is deleted or visible again. Order within
 * a group, receive counts and the dead-letter redrive are fauxqs's own. Idempotent; must run in the
 * process that embeds fauxqs (the local stack) before queues are polled.
 */
async function receiveFifoBatchesAsSqs(): Promise<void> {
  if (installed) return;
  const store = join(repoRoot(), 'node_modules', 'fauxqs', 'dist', 'sqs', 'sqsStore.js');
  const { SqsQueue } = (await import(pathToFileURL(store).href)) as { SqsQueue?: { prototype: FauxqsQueue } };
  if (!SqsQueue?.prototype.dequeueFifo) throw new Error(`fauxqs's queue class (SqsQueue.dequeueFifo) not found in ${store}`);
  const dequeueOne = SqsQueue.prototype.dequeueFifo;
  SqsQueue.prototype.dequeueFifo = function (this: FauxqsQueue, maxCount, visibilityTimeoutOverride, dlqResolver) {
    const lockedBefore = new Set(this.fifoLockedGroups.keys());
    const count = Math.min(maxCount, 10);
    const result: unknown[] = [];
    while (result.length < count) {
      const mine = [...this.fifoLockedGroups].filter(([g]) => !lockedBefore.has(g));
      for (const [g] of mine) this.fifoLockedGroups.delete(g);
      const got = dequeueOne.call(this, count - result.length, visibilityTimeoutOverride, dlqResolver);
      for (const [g, n] of mine) this.fifoLockedGroups.set(g, (this.fifoLockedGroups.get(g) ?? 0) + n);
      if (got.length === 0) break;
      result.push(...got);
    }
    return result;
  };
  installed = true;
}

/**
 * fauxqs (SQS, SNS and S3 for the local stack) started in this process with FIFO batches handed
 * out as SQS hands them out ({@link receiveFifoBatchesAsSqs}, installed first). Same options and
 * server as fauxqs's `startFauxqs`.
 */
export async function startFauxqsAsSqs(opts: Parameters<typeof startFauxqs>[0]): ReturnType<typeof startFauxqs> {
  await receiveFifoBatchesAsSqs();
  return startFauxqs(opts);
}
