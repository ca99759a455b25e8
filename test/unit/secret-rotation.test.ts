import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DEFAULT_SECRET_CACHE_TTL_S, secret, secretCacheTtlMs } from '../../shared/config';
import { DomainError } from '../../shared/domain/errors';
import { verifyStandardWebhook, webhookSecretValues } from '../../shared/http/webhook';

/**
 * Inbound webhook secrets during a rotation: the secret value may hold the old and the new secret
 * separated by a space, and a signature by either verifies; secrets read from Secrets Manager are
 * cached for SECRET_CACHE_TTL_S, not for the life of the container.
 */

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const OLD = newSecret();
const NEW = newSecret();
const OTHER = newSecret();

function signed(secretValue: string, body = '{"a":1}', id = 'evt_1') {
  const at = new Date();
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secretValue).sign(id, at, body),
    },
  };
}

describe('inbound webhook secret rotation', () => {
  it('splits a rotation value into its secrets', () => {
    expect(webhookSecretValues(`${OLD} ${NEW}`)).toEqual([OLD, NEW]);
    expect(webhookSecretValues(` ${OLD}\n`)).toEqual([OLD]);
  });

  it('accepts a signature by the old or the new secret while both are configured', () => {
    const both = `${OLD} ${NEW}`;
    for (const s of [OLD, NEW]) {
      const { body, headers } = signed(s);
      expect(() => verifyStandardWebhook(both, body, headers)).not.toThrow();
    }
  });

  it('refuses a signature by neither, 401 INVALID_SIGNATURE', () => {
    const { body, headers } = signed(OTHER);
    let caught: unknown;
    try {
      verifyStandardWebhook(`${OLD} ${NEW}`, body, headers);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as DomainError).code).toBe('INVALID_SIGNATURE');
  });

  it('after the rotation (new secret only) the old signature is refused', () => {
    const { body, headers } = signed(OLD);
    expect(() => verifyStandardWebhook(NEW, body, headers)).toThrow(DomainError);
    const ok = signed(NEW);
    expect(() => verifyStandardWebhook(NEW, ok.body, ok.headers)).not.toThrow();
  });

  it('refuses a tampered body under either secret', () => {
    const { headers } = signed(NEW);
    expect(() => verifyStandardWebhook(`${OLD} ${NEW}`, '{"a":2}', headers)).toThrow(DomainError);
  });
});

describe('secret() cache TTL', () => {
  const realFetch = global.fetch;
  const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rot-test';
  let value = 'v1';
  let reads = 0;
  beforeEach(() => {
    delete process.env.ROT_TEST_SECRET;
    process.env.ROT_TEST_SECRET_ARN = ARN;
    delete process.env.SECRET_CACHE_TTL_S;
    reads = 0;
    global.fetch = (async () => {
      reads++;
      return new Response(JSON.stringify({ SecretString: value }), { status: 200 });
    }) as typeof fetch;
  });
  afterAll(() => {
    global.fetch = realFetch;
    delete process.env.ROT_TEST_SECRET_ARN;
  });

  it('defaults to 300 s and reads SECRET_CACHE_TTL_S', () => {
    expect(DEFAULT_SECRET_CACHE_TTL_S).toBe(300);
    expect(secretCacheTtlMs()).toBe(300_000);
    process.env.SECRET_CACHE_TTL_S = '60';
    expect(secretCacheTtlMs()).toBe(60_000);
    process.env.SECRET_CACHE_TTL_S = 'nonsense';
    expect(secretCacheTtlMs()).toBe(300_000);
  });

  it('serves the cached value within the TTL and reads a rotated value after it', async () => {
    process.env.SECRET_CACHE_TTL_S = '300';
    const t0 = 1_000_000_000_000;
    value = 'v1';
    expect(await secret('ROT_TEST_SECRET', 'ROT_TEST_SECRET_ARN', t0)).toBe('v1');
    value = `v1 v2`;
    expect(await secret('ROT_TEST_SECRET', 'ROT_TEST_SECRET_ARN', t0 + 299_000)).toBe('v1');
    expect(reads).toBe(1);
    expect(await secret('ROT_TEST_SECRET', 'ROT_TEST_SECRET_ARN', t0 + 300_001)).toBe('v1 v2');
    expect(reads).toBe(2);
  });

  it('does not cache a failed read', async () => {
    const t0 = 2_000_000_000_000;
    global.fetch = (async () => {
      reads++;
      return new Response('no', { status: 500 });
    }) as typeof fetch;
    process.env.ROT_TEST_SECRET_ARN = `${ARN}-2`;
    await expect(secret('ROT_TEST_SECRET', 'ROT_TEST_SECRET_ARN', t0)).rejects.toThrow(/HTTP 500/);
    global.fetch = (async () => new Response(JSON.stringify({ SecretString: 'ok' }), { status: 200 })) as typeof fetch;
    expect(await secret('ROT_TEST_SECRET', 'ROT_TEST_SECRET_ARN', t0 + 1)).toBe('ok');
  });
});
