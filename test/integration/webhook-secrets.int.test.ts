import { statSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { LOCAL_TABLE_NAME, localTableClient } from '../../infra/local/dynamodb-local';
import { listenOnLoopback } from '../../infra/local/loopback';
import { api, stackDataDir, token, uid, waitFor, localStack } from '../support/api';

/**
 * Outbound webhook signing secrets at rest, on the local stack: after an endpoint is registered
 * (and its secret rotated) no item of the table holds a signing secret in any attribute (they are
 * sealed with the local key file, mode 0600, in LOCAL_DATA_DIR); deliveries still verify at the
 * receiver with the secret shown at registration. And the delivery log's `next_token`: a garbled,
 * forged or another endpoint's token is 400 VALIDATION_ERROR, never a 500.
 */

interface Received {
  path: string;
  headers: Record<string, string>;
  raw: string;
}

describe('outbound webhook secrets at rest and delivery-log tokens', () => {
  const received: Received[] = [];
  let base = '';
  let close: () => Promise<void> = async () => undefined;
  const stack = () => localStack();

  beforeAll(async () => {
    const server = createServer((req: IncomingMessage, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, raw });
        res.writeHead(204);
        res.end();
      });
    });
    const l = await listenOnLoopback(server);
    base = `http://127.0.0.1:${l.port}`;
    close = l.close;
  });
  afterAll(async () => {
    await close();
  });

  /** Every item of the local table, as JSON text. */
  async function tableText(): Promise<string[]> {
    const out: string[] = [];
    for await (const page of paginateScan({ client: localTableClient(stack().endpoints.dynamodb!) }, { TableName: LOCAL_TABLE_NAME })) {
      for (const item of page.Items ?? []) out.push(JSON.stringify(item));
    }
    return out;
  }

  it('no signing secret is stored in any attribute; deliveries verify with the secret shown once', async () => {
    const mfiId = uid('MFI');
    const mfi = await token({ role: 'MFI', mfi_id: mfiId, sub: `user-${mfiId}` });
    const created = await api('POST', '/webhooks/endpoints', { token: mfi, body: { url: `${base}/mfi`, events: ['deposit.completed'] } });
    expect(created.status).toBe(201);
    const first: string = created.body.secret;
    expect(first).toMatch(/^whsec_/);
    const rotated = await api('POST', `/webhooks/endpoints/${created.body.endpoint_id}/rotate-secret`, { token: mfi });
    expect(rotated.status).toBe(200);
    const second: string = rotated.body.secret;

    const items = await tableText();
    const endpointItem = items.find((t) => t.includes(created.body.endpoint_id) && t.includes('"OWH_ENDPOINT"'));
    expect(endpointItem).toBeDefined();
    expect(endpointItem).toContain('sealed_secret');
    for (const secret of [first, second]) {
      const body = secret.slice('whsec_'.length);
      expect(items.filter((t) => t.includes(secret) || t.includes(body))).toEqual([]);
    }
    expect(items.filter((t) => t.includes('whsec_'))).toEqual([]);
    // The local master key: a file of the data dir that only its owner may read.
    expect(statSync(join(stackDataDir(), 'outbound-secrets.key')).mode & 0o777).toBe(0o600);

    // A delivery is signed with both secrets (the rotation's overlap) and verifies with each.
    const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'UGX', source_amount: 3_700_000 } });
    expect(dep.status).toBe(202);
    const got = await waitFor(
      async () => received.filter((r) => r.path === '/mfi' && r.raw.includes(dep.body.payment_id)),
      (l) => l.length > 0,
      30_000,
      250,
    );
    for (const secret of [first, second]) {
      const event = new Webhook(secret).verify(got[0]!.raw, {
        'webhook-id': got[0]!.headers['webhook-id']!,
        'webhook-timestamp': got[0]!.headers['webhook-timestamp']!,
        'webhook-signature': got[0]!.headers['webhook-signature']!,
      }) as { type: string };
      expect(event.type).toBe('deposit.completed');
    }
  });

  it('a garbled, forged or foreign next_token on GET deliveries is 400 VALIDATION_ERROR; a genuine one pages', async () => {
    const [m1, m2] = [uid('MFI'), uid('MFI')];
    const t1 = await token({ role: 'MFI', mfi_id: m1, sub: `user-${m1}` });
    const t2 = await token({ role: 'MFI', mfi_id: m2, sub: `user-${m2}` });
    const ep1 = await api('POST', '/webhooks/endpoints', { token: t1, body: { url: `${base}/p1`, events: ['deposit.completed'] } });
    const ep2 = await api('POST', '/webhooks/endpoints', { token: t2, body: { url: `${base}/p2`, events: ['deposit.completed'] } });
    for (let i = 0; i < 2; i++) {
      const dep = await api('POST', '/mfi/deposits', { token: t1, body: { source_currency: 'UGX', source_amount: 3_700_000 + i } });
      expect(dep.status).toBe(202);
      await waitFor(
        async () => received.filter((r) => r.path === '/p1' && r.raw.includes(dep.body.payment_id)),
        (l) => l.length > 0,
        30_000,
        250,
      );
    }
    const path = (id: string, next: string) => `/webhooks/endpoints/${id}/deliveries?limit=1&next_token=${encodeURIComponent(next)}`;
    const page1 = await api('GET', `/webhooks/endpoints/${ep1.body.endpoint_id}/deliveries?limit=1`, { token: t1 });
    expect(page1.status).toBe(200);
    const genuine = page1.body.next_token as string;
    expect(typeof genuine).toBe('string');
    const page2 = await api('GET', path(ep1.body.endpoint_id, genuine), { token: t1 });
    expect(page2.status).toBe(200);
    expect(page2.body.deliveries[0].delivery_id).not.toBe(page1.body.deliveries[0].delivery_id);

    const key = JSON.parse(Buffer.from(genuine, 'base64url').toString('utf8')) as Record<string, string>;
    const enc = (k: unknown) => Buffer.from(JSON.stringify(k)).toString('base64url');
    const forged = {
      garbled: 'not a token!*',
      notJson: Buffer.from('{"PK":').toString('base64url'),
      // Was a 500: DynamoDB refuses an ExclusiveStartKey with a map where a key string belongs.
      nestedMap: enc({ PK: 'OWH_DELIVERY#x', SK: { M: 1 }, GSI1PK: key.GSI1PK, GSI1SK: 'x' }),
      extraField: enc({ ...key, admin: 'true' }),
      otherEndpoint: enc({ ...key, GSI1PK: `OWH_DELIVERIES#${ep2.body.endpoint_id}` }),
      otherPartition: enc({ ...key, PK: 'PAYMENT#PAY-2026-000001-01' }),
      tamperedSortKey: enc({ ...key, GSI1SK: '9999-12-31T00:00:00.000Z#whd_00000000000000000000000000' }),
      array: enc([key]),
    };
    for (const [name, next] of Object.entries(forged)) {
      const r = await api('GET', path(ep1.body.endpoint_id, next), { token: t1 });
      expect([name, r.status, r.body.error?.code, r.body.error?.details?.[0]?.path]).toEqual([name, 400, 'VALIDATION_ERROR', 'next_token']);
    }
    // Another endpoint's genuine token on this endpoint's log is refused too.
    const foreign = await api('GET', path(ep2.body.endpoint_id, genuine), { token: t2 });
    expect([foreign.status, foreign.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});
