import { openApiDocument } from '../../shared/http/openapi';
import { ContractValidator, type OpenApiDoc } from '../support/contract';

/** The response validator the integration tests run every response through (test/setup/contract-fetch.ts). */
const v = new ContractValidator(openApiDocument('https://api.example.test') as unknown as OpenApiDoc);
const errorBody = JSON.stringify({
  error: {
    code: 'FARMER_NOT_REGISTERED',
    message: 'Farmer not found',
    docs: 'https://api.example.test/docs/errors#FARMER_NOT_REGISTERED',
    request_id: 'r-1',
  },
});

describe('ContractValidator', () => {
  it('matches literal path segments before templated ones', () => {
    expect(v.match('GET', '/payments/farmer-payout/PAY-1')).toBe('/payments/farmer-payout/{id}');
    expect(v.match('GET', '/payments/PAY-1')).toBe('/payments/{id}');
    expect(v.match('GET', '/nowhere')).toBeUndefined();
  });

  it('accepts a documented error envelope', () => {
    const r = v.validate({ method: 'GET', path: '/farmers/F-1', status: 404, contentType: 'application/json', body: errorBody });
    expect(r).toEqual({ kind: 'valid', operation: 'GET /farmers/{id}' });
  });

  it('fails a drifted body', () => {
    const drifted = JSON.stringify({ error: { code: 404, message: 'Farmer not found' } });
    const r = v.validate({ method: 'GET', path: '/farmers/F-1', status: 404, contentType: 'application/json', body: drifted });
    expect(r.kind).toBe('invalid');
  });

  it('fails an undocumented status', () => {
    const r = v.validate({ method: 'GET', path: '/farmers/F-1', status: 418, contentType: 'application/json', body: errorBody });
    expect(r).toMatchObject({ kind: 'invalid', problems: [expect.stringContaining('status 418 is not documented')] });
  });

  it('fails an undocumented content type and a body that is not JSON', () => {
    expect(v.validate({ method: 'GET', path: '/farmers/F-1', status: 404, contentType: 'text/plain', body: 'nope' }).kind).toBe('invalid');
    expect(v.validate({ method: 'GET', path: '/farmers/F-1', status: 404, contentType: 'application/json', body: 'nope' }).kind).toBe(
      'invalid',
    );
  });

  it('leaves requests outside the document unmatched', () => {
    expect(v.validate({ method: 'GET', path: '/nowhere', status: 404, contentType: 'application/json', body: errorBody }).kind).toBe(
      'unmatched',
    );
  });
});
