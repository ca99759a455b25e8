import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { asStoreError, isStoreUnavailable } from '../../shared/adapters/dynamodb/table';
import { StoreUnavailableError } from '../../shared/domain/errors';
import { onTheWire } from './support/errors';

/** Which DynamoDB SDK errors mean "the table is unavailable" (503 AUDIT_LOG_UNAVAILABLE) and which keep their meaning. */

const meta = { $metadata: { httpStatusCode: 400 } };

describe('isStoreUnavailable / asStoreError', () => {
  it.each([
    ['ProvisionedThroughputExceededException', new ProvisionedThroughputExceededException({ message: 'x', ...meta })],
    ['ThrottlingException', new ThrottlingException({ message: 'x', ...meta })],
    ['RequestLimitExceeded', new RequestLimitExceeded({ message: 'x', ...meta })],
    ['InternalServerError', new InternalServerError({ message: 'x', $metadata: { httpStatusCode: 500 } })],
    [
      'ServiceUnavailable (503 server fault)',
      new DynamoDBServiceException({ name: 'ServiceUnavailable', $fault: 'server', message: 'x', $metadata: { httpStatusCode: 503 } }),
    ],
    [
      'an unnamed 5xx server fault',
      new DynamoDBServiceException({ name: 'Unknown', $fault: 'server', message: 'x', $metadata: { httpStatusCode: 502 } }),
    ],
    ['TimeoutError', Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
    ['ECONNRESET', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['ENOTFOUND', Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })],
  ])('maps %s to StoreUnavailableError (503, Retry-After 5) keeping the cause', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
    const mapped = asStoreError(err);
    expect(mapped).toBeInstanceOf(StoreUnavailableError);
    expect(onTheWire(mapped)).toMatchObject({ code: 'AUDIT_LOG_UNAVAILABLE', status: 503, headers: { 'Retry-After': '5' }, cause: err });
  });

  it.each([
    ['ConditionalCheckFailedException', new ConditionalCheckFailedException({ message: 'x', ...meta })],
    [
      'TransactionCanceledException',
      new TransactionCanceledException({ message: 'x', ...meta, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }),
    ],
    ['TransactionConflictException', new TransactionConflictException({ message: 'x', ...meta })],
    [
      'a ValidationException (client fault)',
      new DynamoDBServiceException({ name: 'ValidationException', $fault: 'client', message: 'x', $metadata: { httpStatusCode: 400 } }),
    ],
    ['a plain Error', new Error('bug')],
    ['undefined', undefined],
  ])('leaves %s unchanged', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
    expect(asStoreError(err)).toBe(err);
  });
});
