import { ERROR_MEANINGS } from '../../shared/domain/error-catalogue';
import { DomainError, type ErrorCode, isUnavailableCode, StoreUnavailableError } from '../../shared/domain/errors';
import { domainErrorResponse } from '../../shared/http/envelope';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { ERROR_STATUS, errorHeaders } from '../../shared/http/error-status';

/**
 * HTTP lives in shared/http, not in the domain errors: the status of every code, and `Retry-After`
 * from the domain fact `retryAfterSeconds` (docs/architecture.md#domain-errors-and-http).
 */
describe('domain error codes on the wire', () => {
  const codes = Object.keys(ERROR_MEANINGS) as ErrorCode[];

  it('gives every code of the catalogue exactly one HTTP status, and the reference lists both', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual([...codes].sort());
    for (const code of codes) expect(ERROR_CODES[code]).toEqual({ status: ERROR_STATUS[code], title: ERROR_MEANINGS[code] });
  });

  it('answers 503 exactly for the codes of a temporarily unavailable dependency (the ones workers retry)', () => {
    const unavailable = codes.filter(isUnavailableCode).sort();
    expect(unavailable).toEqual(codes.filter((c) => ERROR_STATUS[c] === 503).sort());
    expect(unavailable).toContain('LEDGER_UNAVAILABLE');
  });

  it('carries no HTTP in the domain error itself', () => {
    const err = new StoreUnavailableError();
    expect(err).not.toHaveProperty('status');
    expect(err).not.toHaveProperty('headers');
    expect(err.retryAfterSeconds).toBe(5);
  });

  it('sends Retry-After in whole seconds (at least 1) only when the error says how long to wait', () => {
    expect(errorHeaders(new DomainError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 2.2 }))).toEqual({ 'Retry-After': '3' });
    expect(errorHeaders(new DomainError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 0 }))).toEqual({ 'Retry-After': '1' });
    expect(errorHeaders(new DomainError('BATCH_NOT_FOUND', 'no such batch'))).toEqual({});
  });

  it('builds the response from the code: status, envelope and Retry-After', () => {
    const res = domainErrorResponse(new StoreUnavailableError(), 'req-1');
    expect(res.statusCode).toBe(503);
    expect(res.headers['Retry-After']).toBe('5');
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'AUDIT_LOG_UNAVAILABLE', request_id: 'req-1' });
    const notFound = domainErrorResponse(new DomainError('BATCH_NOT_FOUND', 'no such batch'), 'req-2');
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers).not.toHaveProperty('Retry-After');
  });
});
