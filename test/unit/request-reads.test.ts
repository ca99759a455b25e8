import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { decodeTime } from 'ulid';
import { documentClient } from '../../shared/adapters/dynamodb/table';
import { newUlid } from '../../shared/domain/ids';
import type { OutboundEndpoint, OutboundWebhookStore } from '../../shared/domain/outbound-webhooks';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { AuditEntry, LedgerTx } from '../../shared/domain/records';
import { awsClient } from '../../shared/runtime/aws-client';
import { changeStage } from '../../shared/use-cases/custody';
import { type EndpointListings, publishChanges } from '../../shared/use-cases/outbound-webhooks';
import { coop } from './support/api-event';
import { aBatch, fakeBatchStore, fakeCustodyStore, fakeEvidenceKeeping, fakeWorkQueue } from './support/fakes';

/**
 * Work a request does not repeat (docs/powertools.md#aws-sdk-clients): the same item is not read
 * twice in one request, an owner's webhook endpoints are listed once per stream batch, and the
 * SDK's logging middleware does not filter every input and output for a logger that discards them,
 * and a ULID does not ask the CSPRNG once per character.
 * (startBatchPayout's single batch read: test/unit/faults-payouts.test.ts.)
 */

describe('PATCH /batch/{id}/stage reads the batch once', () => {
  it('hands the batch it read (consistently) to the commit as the audit head, so the commit does not read it again', async () => {
    const batch = aBatch();
    const get = jest.fn(async () => ({ ...batch }));
    let head: unknown;
    const custody = fakeCustodyStore({
      commitStage: async (input) => {
        head = input.head;
        const entry = { sequence_number: 2, hash: 'ef'.repeat(32) } as AuditEntry;
        const ledgerTx = { ledger_tx_id: `${batch.batch_id}-2`, status: 'PENDING', history_index: 1 } as LedgerTx;
        return { entry, ledgerTx: ledgerTx as never };
      },
      getLedgerTx: async () => null,
      attachJob: async () => true,
    });
    const result = await changeStage(
      {
        batches: fakeBatchStore({ get }),
        custody,
        evidence: fakeEvidenceKeeping(),
        ledgerQueue: fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', { send: async () => undefined }),
        now: () => new Date('2026-11-22T10:00:00.000Z'),
      },
      coop('COOP-1'),
      batch.batch_id,
      { cooperative_id: 'COOP-1', new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.1 } },
      { waitMs: 0 },
    );
    expect(result.kind).toBe('accepted');
    expect(get).toHaveBeenCalledTimes(1);
    expect(head).toEqual(batch);
  });
});

describe('the stream consumer lists each owner’s endpoints once per batch', () => {
  const change = (batchId: string, coopId: string) => ({
    newImage: {
      entity: 'BATCH',
      batch_id: batchId,
      cooperative_id: coopId,
      stage_history: [{ stage: 'DELIVERED', chain_tx_hash: `0x${batchId}`, at: '2026-11-22T09:59:00.000Z' }],
    },
  });

  function store() {
    const listed: string[] = [];
    const s: Pick<OutboundWebhookStore, 'listEndpoints' | 'listMfiEndpoints'> = {
      listEndpoints: async (owner) => {
        listed.push(owner);
        return [] as OutboundEndpoint[];
      },
      listMfiEndpoints: async () => [],
    };
    return { listed, deps: { store: s as OutboundWebhookStore, queue: { send: async () => undefined }, now: () => new Date() } };
  }

  it('with one listing map for the batch: ADMIN and each cooperative once, however many events', async () => {
    const { listed, deps } = store();
    const listings: EndpointListings = new Map();
    for (const c of [change('B-1', 'COOP-A'), change('B-2', 'COOP-A'), change('B-3', 'COOP-B'), change('B-4', 'COOP-A')])
      await publishChanges(deps as never, [c], listings);
    expect(listed.sort()).toEqual(['ADMIN', 'COOPERATIVE#COOP-A', 'COOPERATIVE#COOP-B']);
  });

  it('a failed listing is not kept: the next change lists again', async () => {
    const { listed, deps } = store();
    let fail = true;
    const listEndpoints = deps.store.listEndpoints;
    deps.store.listEndpoints = async (owner) => {
      if (fail && owner === 'ADMIN') {
        fail = false;
        throw new Error('throttled');
      }
      return listEndpoints(owner);
    };
    const listings: EndpointListings = new Map();
    await expect(publishChanges(deps as never, [change('B-1', 'COOP-A')], listings)).rejects.toThrow('throttled');
    await publishChanges(deps as never, [change('B-1', 'COOP-A')], listings);
    expect(listed.filter((o) => o === 'ADMIN')).toHaveLength(1);
  });
});

describe('awsClient', () => {
  const names = (c: { middlewareStack: { identify(): string[] } }) => c.middlewareStack.identify().map((n) => n.split(' ')[0]);

  it('removes the SDK logging middleware from a client without a logger of its own (the no-op default)', () => {
    expect(names(new SQSClient({ region: 'eu-west-1' }))).toContain('loggerMiddleware');
    expect(names(awsClient(new SQSClient({ region: 'eu-west-1' })))).not.toContain('loggerMiddleware');
    // The table's document client shares its DynamoDB client's stack.
    expect(names(documentClient())).not.toContain('loggerMiddleware');
    expect(names(documentClient())).toContain('httpSigningMiddleware');
  });

  it('keeps it for a client given a logger', () => {
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    expect(names(awsClient(new DynamoDBClient({ region: 'eu-west-1', logger })))).toContain('loggerMiddleware');
  });
});

describe('newUlid', () => {
  it('makes valid, distinct, time-ordered ULIDs from CSPRNG bytes drawn a block at a time, not one call per character', () => {
    const draws = jest.spyOn(crypto, 'getRandomValues');
    const t0 = Date.now();
    const ids = Array.from({ length: 200 }, () => newUlid());
    // 200 ULIDs × 16 random characters = 3,200 bytes: at most one refill of the 4 KiB buffer (ulid's own PRNG: 3,200 calls).
    expect(draws.mock.calls.length).toBeLessThanOrEqual(1);
    draws.mockRestore();
    expect(new Set(ids).size).toBe(200);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(decodeTime(id)).toBeGreaterThanOrEqual(t0);
    }
    // The random part uses the whole alphabet (32 characters), as ulid's own PRNG does.
    expect(new Set(ids.map((id) => id.slice(10)).join('')).size).toBe(32);
  });
});
