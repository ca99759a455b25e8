import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as getCreditScore } from '../../functions/get-credit-score/handler';
import { BatchRepository, FARMER_BATCH_SCAN_PAGES } from '../../shared/adapters/dynamodb/batch-repo';
import type { Caller } from '../../shared/domain/caller';
import { logger } from '../../shared/runtime/logger';
import { ADMIN, agent, apiEvent, coop, expectErrorEnvelope, lambdaContext, mfi, parse } from './support/api-event';
import { aBatch, aFarmer } from './support/fakes';

/**
 * GET /farmers/{id}/credit-score through its handler with the DynamoDB client mocked: roles,
 * cooperative binding (403), unknown farmer (404), the answer's shape; and the batch store's
 * bounded by-farmer query.
 */

const ddb = mockClient(DynamoDBDocumentClient);

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
});

const farmer = aFarmer();
beforeEach(() => {
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
  ddb
    .on(GetCommand)
    .callsFake((input: { Key: { PK: string } }) =>
      input.Key.PK === `FARMER#${farmer.farmer_id}` ? { Item: { PK: input.Key.PK, SK: 'META', ...farmer } } : {},
    );
  ddb
    .on(QueryCommand)
    .callsFake((input: { ExpressionAttributeValues: Record<string, string> }) =>
      input.ExpressionAttributeValues[':b'] === 'BATCH#'
        ? { Items: [{ PK: 'BATCH#BATCH-2026-000001', SK: 'META', ...aBatch({ weight_kg: 300 }) }] }
        : { Items: [] },
    );
});

const call = async (caller: Caller | null, id = farmer.farmer_id) =>
  parse(
    await getCreditScore(
      apiEvent({
        method: 'GET',
        path: `/farmers/${id}/credit-score`,
        resource: '/farmers/{id}/credit-score',
        pathParameters: { id },
        caller,
      }),
      lambdaContext(),
    ),
  );

describe('GET /farmers/{id}/credit-score', () => {
  it("200 for the farmer's cooperative, MFI and ADMIN, with every factor", async () => {
    for (const caller of [coop('COOP-1'), mfi('MFI-1'), ADMIN]) {
      const res = await call(caller);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ farmer_id: 'F-1', formula_version: '1', band: expect.stringMatching(/^[A-E]$/) });
      const body = res.body as { score: number; factors: Array<{ name: string; value: number; effect: number }> };
      expect(body.score).toBe(500 + body.factors.reduce((a, f) => a + f.effect, 0));
      expect(body.factors.find((f) => f.name === 'deliveries')).toEqual({ name: 'deliveries', value: 1, effect: 4 });
      expect(body.factors.find((f) => f.name === 'volume_kg')).toEqual({ name: 'volume_kg', value: 300, effect: 3 });
    }
  });

  it('403 INSUFFICIENT_PERMISSIONS for another cooperative, and for AGENT tokens', async () => {
    expectErrorEnvelope(await call(coop('COOP-2')), 403, 'INSUFFICIENT_PERMISSIONS');
    expectErrorEnvelope(await call(agent('COOP-1')), 403, 'INSUFFICIENT_PERMISSIONS');
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('404 FARMER_NOT_REGISTERED for an unknown farmer; 400 for a malformed id', async () => {
    expectErrorEnvelope(await call(ADMIN, 'F-404'), 404, 'FARMER_NOT_REGISTERED');
    expectErrorEnvelope(await call(ADMIN, 'bad id!'), 400, 'VALIDATION_ERROR');
  });
});

describe('BatchRepository.listByFarmer', () => {
  it("queries the cooperative's batches filtered on the farmer and confirmed mints, page by page up to the limit", async () => {
    ddb.reset();
    let page = 0;
    ddb.on(QueryCommand).callsFake(() => {
      page++;
      return {
        Items: [{ ...aBatch({ batch_id: `BATCH-2026-00000${page}` }), PK: 'x', GSI1PK: 'y' }],
        LastEvaluatedKey: { PK: `p${page}` },
      };
    });
    const out = await new BatchRepository().listByFarmer('F-1', 'COOP-1', 3);
    expect(out.map((b) => b.batch_id)).toEqual(['BATCH-2026-000001', 'BATCH-2026-000002', 'BATCH-2026-000003']);
    expect(out[0]).not.toHaveProperty('PK');
    const calls = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatchObject({
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :b)',
      FilterExpression: 'farmer_id = :f AND mint_status = :c',
      ExpressionAttributeValues: { ':pk': 'COOP#COOP-1', ':b': 'BATCH#', ':f': 'F-1', ':c': 'CONFIRMED' },
    });
    expect(calls[1]!.ExclusiveStartKey).toEqual({ PK: 'p1' });
  });

  it(`stops after ${FARMER_BATCH_SCAN_PAGES} pages even when the limit is not reached`, async () => {
    ddb.reset();
    ddb.on(QueryCommand).resolves({ Items: [], LastEvaluatedKey: { PK: 'more' } });
    await expect(new BatchRepository().listByFarmer('F-1', 'COOP-1', 1_000)).resolves.toEqual([]);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(FARMER_BATCH_SCAN_PAGES);
  });
});
