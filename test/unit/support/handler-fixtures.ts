import { randomBytes } from 'node:crypto';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { Cooperative, Farmer, Payout } from '../../../shared/domain/records';
import { logger } from '../../../shared/runtime/logger';
import { apiEvent, lambdaContext, parse, type EventInput } from './api-event';

/** Records, stored items and request bodies the handler tests share, and `call` to run a handler on an API Gateway event. */

export type Handler = (
  event: ReturnType<typeof apiEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

export async function call(h: Handler, input: EventInput) {
  const raw = await h(apiEvent(input), lambdaContext());
  return { ...parse(raw), raw: raw.body };
}

// ------------------------------------------------------------------ fixtures

export const cooperativeRecord = (over: Partial<Cooperative> = {}): Cooperative => ({
  cooperative_id: 'COOP-1',
  name: 'Bugisu Farmers',
  district: 'Mbale',
  licence_status: 'ACTIVE',
  licence_expires_at: '2099-12-31',
  manager: { name: 'Grace', email: 'grace@example.org', phone: '+256772123456' },
  prices_ugx_per_kg: { screen18: 7000, screen15: 6500, FAQ: 6000, PB: 6800 },
  export_premium_ugx_per_kg: 500,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
  ...over,
});

export const farmerRecord = (over: Partial<Farmer> = {}): Farmer => ({
  farmer_id: 'F-1',
  full_name: 'Jane Nabwire',
  cooperative_id: 'COOP-1',
  phone: '+256772000111',
  district: 'Mbale',
  farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.5 },
  gfw_status: 'CLEAR',
  registered_at: '2025-01-01T00:00:00.000Z',
  registered_by: 'admin-1',
  ...over,
});

export const stored = <T extends object>(pk: string, entity: string, record: T) => ({ PK: pk, SK: 'META', entity, ...record });

export const PAYOUT_ID = 'PAY-2025-000042-01';
const payoutRecord: Payout = {
  payment_id: PAYOUT_ID,
  payment_type: 'FARMER_PAYOUT',
  batch_id: 'BATCH-2025-000042',
  farmer_id: 'F-1',
  cooperative_id: 'COOP-1',
  reason: 'NET_COFFEE_PAYMENT',
  status: 'COMPLETED',
  amount_usd_micro: 12_345_678,
  amount_ugx: 45_678,
  estimated_ugx: 45_600,
  exchange_rate: '3700.25',
  quote_id: 'q-1',
  phone: '+256772000111',
  recipient_name: 'Jane Nabwire',
  attempt: 1,
  retry_count: 0,
  provider_order_id: 'ord-1',
  task_token: 'secret-task-token',
  task_token_attempt: 1,
  mobile_money_transaction_id: 'MM-1',
  created_at: '2025-03-01T10:00:00.000Z',
  updated_at: '2025-03-01T10:00:40.000Z',
  completed_at: '2025-03-01T10:00:40.000Z',
  elapsed_seconds: 40,
  created_by: 'coop-user-COOP-1',
};
export const storedPayout = {
  ...stored(`PAYMENT#${PAYOUT_ID}`, 'PAYOUT', payoutRecord),
  GSI1PK: 'PAYMENTS#BATCH-2025-000042',
  GSI1SK: `${payoutRecord.created_at}#${PAYOUT_ID}`,
};

export const storedBatch = (cooperativeId = 'COOP-1') => ({
  ...stored('BATCH#BATCH-2025-000042', 'BATCH', {
    batch_id: 'BATCH-2025-000042',
    cooperative_id: cooperativeId,
    farmer_id: 'F-1',
    mint_status: 'CONFIRMED',
    stage: 'DELIVERED',
  }),
  GSI1PK: `COOP#${cooperativeId}`,
  GSI1SK: 'BATCH#BATCH-2025-000042',
});

export const newCooperativeBody = () => ({
  cooperative_id: 'COOP-7',
  name: 'Sipi Falls Growers',
  district: 'Kapchorwa',
  licence_status: 'ACTIVE',
  licence_expires_at: '2030-06-30',
  manager: { name: 'Okello', email: 'okello@example.org', phone: '  +256772123456 ' },
  prices_ugx_per_kg: { screen18: 7000, screen15: 6500, FAQ: 6000, PB: 6800 },
  export_premium_ugx_per_kg: 300,
});

export const farmerBody = (over: Record<string, unknown> = {}) => ({
  farmer_id: 'F-9',
  full_name: 'Peter Wandera',
  cooperative_id: 'COOP-1',
  phone: '+256772000999',
  district: 'Mbale',
  farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.2 },
  ...over,
});

export const batchBody = (over: Record<string, unknown> = {}) => ({
  farmer_id: 'F-1',
  cooperative_id: 'COOP-1',
  weight_kg: 60,
  grade: 'screen18',
  moisture_pct: 12.5,
  collection_point_gps: { lat: 1.08, lng: 34.17 },
  collector_agent_id: 'AG-1',
  ...over,
});

// ------------------------------------------------------------------ POST /cooperatives

/**
 * The mocked DynamoDB and Step Functions clients of a handler test file, reset before each test to
 * refuse any command the test did not expect, and the environment the handlers read (a fresh
 * payout webhook secret, no ledger settings). Call once at the top of the file.
 */
export function useHandlerMocks() {
  const ddb = mockClient(DynamoDBDocumentClient);
  const sfn = mockClient(SFNClient);
  const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;
  beforeAll(() => {
    logger.setLogLevel('SILENT');
    process.env.TABLE_NAME = 't';
    process.env.DOCS_BASE_URL = 'http://x/docs';
    process.env.AWS_REGION = 'eu-west-1';
    process.env.PAYOUT_WEBHOOK_SECRET = webhookSecret;
    for (const name of ['LEDGER_SIGNER_KEY', 'LEDGER_SIGNER_KEY_SECRET_ARN', 'LEDGER_RPC_URL', 'BATCH_TOKEN_ADDRESS', 'TRACE_LOG_ADDRESS'])
      delete process.env[name];
  });
  beforeEach(() => {
    ddb.reset();
    sfn.reset();
    ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
    sfn.onAnyCommand().rejects(new Error('unexpected Step Functions command in this test'));
  });
  return { ddb, sfn, webhookSecret };
}
