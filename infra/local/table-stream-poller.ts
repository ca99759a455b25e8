import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/**
 * The local stand-in for Lambda's DynamoDB Streams event source: turns on the table's stream
 * (NEW_AND_OLD_IMAGES, as the CDK stack does) on DynamoDB Local, which implements the Streams API
 * on its own endpoint, follows every shard from its start (TRIM_HORIZON, new shards as they
 * open), keeps only records whose new image's `entity` is one of `entities` (the event filter of
 * infra/stack/outbound-webhooks.ts), and hands them to the handler in batches of `batchSize`. A
 * batch item failure is retried from that record after a short pause, as Lambda retries a stream
 * batch, so no change is skipped.
 *
 * The Streams API is called over its JSON protocol with fetch: the SDK's Streams client is not a
 * dependency of this project, and DynamoDB Local does not check request signatures.
 */
export async function enableTableStream(endpoint: string, tableName: string): Promise<string> {
  const client = new DynamoDBClient({ endpoint, region: process.env.AWS_REGION ?? 'us-east-1' });
  try {
    await client.send(
      new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }),
    );
    const arn = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn;
    if (!arn) throw new Error(`DynamoDB Local gave table ${tableName} no stream`);
    return arn;
  } finally {
    client.destroy();
  }
}

interface StreamShard {
  ShardId: string;
  ParentShardId?: string;
}

export function pollTableStream(opts: {
  endpoint: string;
  streamArn: string;
  batchSize: number;
  entities: readonly string[];
  // biome-ignore lint/suspicious/noConfusingVoidType: the Lambda handler types of @types/aws-lambda return `void` when there is no batch response
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;
  log?: (line: string) => void;
  intervalMs?: number;
}): { stop(): Promise<void> } {
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const call = async <T>(op: string, body: unknown): Promise<T> => {
    const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
    const res = await fetch(opts.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDBStreams_20120810.${op}`,
        'x-amz-date': date,
        authorization: `AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/${region}/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=local`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${op}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  };
  const iterators = new Map<string, string | null>(); // shard → next iterator (null: closed and drained)
  const pending = new Map<string, DynamoDBRecord[]>(); // shard → records not yet handled
  let running = true;
  const interval = opts.intervalMs ?? 200;
  const entities = new Set(opts.entities);

  const discover = async () => {
    const d = await call<{ StreamDescription: { Shards: StreamShard[] } }>('DescribeStream', { StreamArn: opts.streamArn });
    for (const s of d.StreamDescription.Shards) {
      if (iterators.has(s.ShardId)) continue;
      const it = await call<{ ShardIterator?: string }>('GetShardIterator', {
        StreamArn: opts.streamArn,
        ShardId: s.ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      });
      iterators.set(s.ShardId, it.ShardIterator ?? null);
    }
  };

  const handle = async (shard: string): Promise<void> => {
    const queue = pending.get(shard) ?? [];
    while (queue.length && running) {
      const batch = queue.slice(0, opts.batchSize);
      let failedAt = -1;
      try {
        const res = await opts.handler({ Records: batch });
        const first = res?.batchItemFailures?.[0]?.itemIdentifier;
        if (first !== undefined)
          failedAt = Math.max(
            0,
            batch.findIndex((r) => r.dynamodb?.SequenceNumber === first),
          );
      } catch (err) {
        opts.log?.(`stream consumer failed: ${(err as Error).message}`);
        failedAt = 0;
      }
      queue.splice(0, failedAt < 0 ? batch.length : failedAt);
      if (failedAt >= 0) break; // retried on the next round, from the failed record
    }
    pending.set(shard, queue);
  };

  const loop = (async () => {
    while (running) {
      try {
        await discover();
        for (const [shard, iterator] of iterators) {
          if (!running) break;
          if (iterator) {
            const r = await call<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>('GetRecords', {
              ShardIterator: iterator,
              Limit: 1000,
            });
            iterators.set(shard, r.NextShardIterator ?? null);
            const kept = (r.Records ?? []).filter((rec) =>
              entities.has(String((rec.dynamodb?.NewImage as Record<string, { S?: string }> | undefined)?.entity?.S ?? '')),
            );
            if (kept.length) pending.set(shard, [...(pending.get(shard) ?? []), ...kept]);
          }
          await handle(shard);
        }
      } catch (err) {
        if (running) opts.log?.(`stream poll error: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, interval));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
