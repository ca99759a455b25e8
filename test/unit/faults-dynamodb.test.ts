import { ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { documentClient } from '../../shared/adapters/dynamodb/table';
import { PayoutRepository } from '../../shared/adapters/dynamodb/payout-repo';
import { StoreUnavailableError } from '../../shared/domain/errors';
import { toErrorResponse } from '../../shared/http/handler';
import { aPayout } from './support/fakes';

/**
 * DynamoDB throttling injected as an SDK middleware on the real document client
 * (shared/adapters/dynamodb/table.ts `documentClient()`), so the repositories' own commands meet
 * it: the error that outlasts the SDK's retries reaches the caller as StoreUnavailableError (503
 * AUDIT_LOG_UNAVAILABLE, Retry-After 5), never as a raw SDK error or a 500; nothing leaves the process.
 */

const NAME = 'faults-throttle';
let injected: Error | null = null;
const seen: string[] = [];

beforeAll(() => {
  process.env.TABLE_NAME = 'faults-table';
  process.env.AWS_REGION = 'eu-west-1';
  // Initialize step: before serialization, endpoint, signing and the network (and outside the
  // SDK's retry middleware, i.e. what the caller sees after the SDK gave up).
  documentClient().middlewareStack.add(
    (next, context) => async (args) => {
      seen.push(String(context.commandName));
      if (injected) throw injected;
      return next(args);
    },
    { step: 'initialize', name: NAME, priority: 'high' },
  );
});

afterAll(() => {
  documentClient().middlewareStack.remove(NAME);
});

afterEach(() => {
  injected = null;
  seen.length = 0;
});

const meta = { $metadata: { httpStatusCode: 400, attempts: 3 } };

describe('DynamoDB throttled under the repositories (SDK middleware on documentClient())', () => {
  it.each([
    ['ThrottlingException', () => new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput.', ...meta })],
    [
      'ProvisionedThroughputExceededException',
      () =>
        new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded.',
          ...meta,
        }),
    ],
  ])('a read (GetItem) throttled with %s: StoreUnavailableError → 503 AUDIT_LOG_UNAVAILABLE with Retry-After', async (_name, make) => {
    injected = make();
    const err = await new PayoutRepository().get('PAY-2026-000001-01').catch((e: unknown) => e);
    expect(seen).toEqual(['GetItemCommand']);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ cause: injected });
    const res = toErrorResponse(err, 'req-1');
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'Retry-After': '5' });
    expect(JSON.parse(res.body as string)).toMatchObject({ error: { code: 'AUDIT_LOG_UNAVAILABLE' } });
    expect(res.body).not.toMatch(/throughput/i);
  });

  it('a transactional write (createPending: payout + guard + sequence) throttled: StoreUnavailableError, the same mapping', async () => {
    injected = new ThrottlingException({ message: 'throttled', ...meta });
    const err = await new PayoutRepository().createPending(aPayout(), 0).catch((e: unknown) => e);
    expect(seen).toEqual(['TransactWriteItemsCommand']);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(toErrorResponse(err, 'req-1')).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '5' } });
  });
});
