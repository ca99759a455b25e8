import { createServer, type IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { listenOnLoopback } from '../../infra/local/loopback';
import { api, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Outbound webhooks on the local stack (docs/api/outbound-webhooks.md#outbound-webhooks): endpoints registered on a loopback
 * receiver get real events made from the table's change stream (a submitted batch's
 * batch.stage_changed, its payout's payout.completed), signed per Standard Webhooks and verified
 * here with the `standardwebhooks` library; a 500 is retried (5 s × LOCAL_TIME_SCALE 0.01, in a
 * 1 s queue delay), a replay resends the same webhook-id, a rotated endpoint is signed with both
 * secrets, a 410 disables the endpoint, and another cooperative's endpoint receives nothing; an MFI
 * endpoint gets its own deposit.completed and another MFI's endpoint does not.
 */

interface Received {
  path: string;
  headers: Record<string, string>;
  raw: string;
  answered: number;
  at: number;
}

describe('outbound webhooks', () => {
  const received: Received[] = [];
  /** Status to answer by path: a function of how many requests that path has seen before. */
  const answer: Record<string, (n: number) => number> = {
    '/a': (n) => (n === 0 ? 500 : 200), // coop A: the first request fails, then accepted
    '/b': () => 200, // coop B
    '/gone': () => 410, // coop A: gone
    '/mfi1': () => 204,
    '/mfi2': () => 200,
  };
  let base = '';
  let close: () => Promise<void> = async () => undefined;
  let a: Awaited<ReturnType<typeof setUpCooperative>>;
  let b: Awaited<ReturnType<typeof setUpCooperative>>;

  beforeAll(async () => {
    const server = createServer((req: IncomingMessage, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const path = req.url ?? '';
        const n = received.filter((r) => r.path === path).length;
        const status = (answer[path] ?? (() => 404))(n);
        received.push({ path, headers: req.headers as Record<string, string>, raw, answered: status, at: Date.now() });
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('ok');
      });
    });
    const l = await listenOnLoopback(server);
    base = `http://127.0.0.1:${l.port}`;
    close = l.close;
    [a, b] = await Promise.all([setUpCooperative(), setUpCooperative()]);
  });
  afterAll(async () => {
    await close();
  });

  const register = (tok: string, path: string, events: string[]) =>
    api('POST', '/webhooks/endpoints', { token: tok, body: { url: `${base}${path}`, events, description: `test ${path}` } });
  const verify = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.raw, {
      'webhook-id': r.headers['webhook-id']!,
      'webhook-timestamp': r.headers['webhook-timestamp']!,
      'webhook-signature': r.headers['webhook-signature']!,
    }) as { type: string; timestamp: string; data: Record<string, any> };
  const bodyOf = (r: Received) => JSON.parse(r.raw) as { type: string; timestamp: string; data: Record<string, any> };

  it('refuses callers who may not manage endpoints and bad URLs or events', async () => {
    const agent = await api('POST', '/webhooks/endpoints', { token: a.agent, body: { url: `${base}/a`, events: ['batch.stage_changed'] } });
    expect([agent.status, agent.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const badEvent = await register(a.coop, '/a', ['deposit.completed']);
    expect([badEvent.status, badEvent.body.error.code, badEvent.body.error.details[0].path]).toEqual([
      400,
      'VALIDATION_ERROR',
      'events[0]',
    ]);
    const privateUrl = await api('POST', '/webhooks/endpoints', {
      token: a.coop,
      body: { url: 'http://10.0.0.8/hook', events: ['batch.stage_changed'] },
    });
    expect([privateUrl.status, privateUrl.body.error.details[0].path]).toEqual([400, 'url']);
    const metadata = await api('POST', '/webhooks/endpoints', {
      token: a.coop,
      body: { url: 'https://169.254.169.254/latest', events: ['batch.stage_changed'] },
    });
    expect([metadata.status, metadata.body.error.details[0].path]).toEqual([400, 'url']);
  });

  it('delivers signed events to the own cooperative only, retries after a 500, replays, rotates and disables on 410', async () => {
    // Prepare: endpoints of coop A (one answering 500 first, one 410) and coop B
    const epA = await register(a.coop, '/a', ['batch.stage_changed', 'payout.completed']);
    expect(epA.status).toBe(201);
    expect(epA.body.secret).toMatch(/^whsec_/);
    const secretA: string = epA.body.secret;
    const epGone = await register(a.coop, '/gone', ['batch.stage_changed']);
    const epB = await register(b.coop, '/b', ['batch.stage_changed', 'payout.completed']);
    expect([epGone.status, epB.status]).toEqual([201, 201]);
    const listed = await api('GET', '/webhooks/endpoints', { token: a.coop });
    expect(listed.body.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id).sort()).toEqual(
      [epA.body.endpoint_id, epGone.body.endpoint_id].sort(),
    );
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    const foreign = await api('GET', `/webhooks/endpoints/${epA.body.endpoint_id}/deliveries`, { token: b.coop });
    expect(foreign.status).toBe(403);

    // Act: coop A submits a batch (minted: DELIVERED with its chain_tx_hash; then paid)
    const farmer = await registerFarmer(a.id, a.coop, '+256772123456');
    const submit = await api('POST', '/batch/submit', { token: a.coop, body: batchBody(farmer, a.id) });
    expect([201, 202]).toContain(submit.status);
    const batchId: string = submit.body.data?.batch_id ?? submit.body.batch_id;
    const stageEvents = () =>
      received.filter((r) => r.path === '/a' && bodyOf(r).type === 'batch.stage_changed' && bodyOf(r).data.batch_id === batchId);
    await waitFor(
      async () => stageEvents(),
      (l) => l.some((r) => r.answered === 200),
      30_000,
    );

    // Assert: the first attempt got 500, the retry (same webhook-id) 200; both verify with the secret
    const attempts = stageEvents();
    expect(attempts.map((r) => r.answered).slice(0, 2)).toEqual([500, 200]);
    expect(attempts[1]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(40); // the 5 s wait × LOCAL_TIME_SCALE 0.01
    const event = verify(secretA, attempts[1]!);
    const batch = await api('GET', `/batch/${batchId}`, { token: a.coop });
    expect(event).toMatchObject({
      type: 'batch.stage_changed',
      data: { batch_id: batchId, stage: 'DELIVERED', chain_tx_hash: batch.body.stage_history[0].chain_tx_hash },
    });
    expect(event.data.chain_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(() => verify(`whsec_${Buffer.from('not the secret').toString('base64')}`, attempts[1]!)).toThrow();

    // the payout's completion, phone masked
    const paid = await waitFor(
      async () =>
        received.filter(
          (r) => r.path === '/a' && bodyOf(r).type === 'payout.completed' && bodyOf(r).data.batch_id === batchId && r.answered === 200,
        ),
      (l) => l.length > 0,
      30_000,
    );
    const payout = verify(secretA, paid[0]!);
    expect(payout.data).toMatchObject({ batch_id: batchId, status: 'COMPLETED', cooperative_id: a.id });
    expect(payout.data.phone).toMatch(/^\+256 7•• ••• \d{3}$/);
    expect(paid[0]!.raw).not.toContain('task_token');

    // 410: the endpoint is disabled and its delivery DEAD
    const gone = await waitFor(
      () => api('GET', '/webhooks/endpoints', { token: a.coop }),
      (r) => r.body.endpoints.find((e: { endpoint_id: string }) => e.endpoint_id === epGone.body.endpoint_id)?.status === 'DISABLED',
      20_000,
    );
    expect(gone.body.endpoints.find((e: { endpoint_id: string }) => e.endpoint_id === epGone.body.endpoint_id)).toMatchObject({
      status: 'DISABLED',
    });
    const goneLog = await api('GET', `/webhooks/endpoints/${epGone.body.endpoint_id}/deliveries`, { token: a.coop });
    expect(goneLog.body.deliveries[0]).toMatchObject({ state: 'DEAD', last_status_code: 410 });

    // Coop B's endpoint got nothing of coop A's batch
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.filter((r) => r.path === '/b' && r.raw.includes(batchId))).toEqual([]);

    // The delivery log: DELIVERED after 2 attempts, last 200
    const log = await api('GET', `/webhooks/endpoints/${epA.body.endpoint_id}/deliveries?limit=10`, { token: a.coop });
    expect(log.status).toBe(200);
    const stageDelivery = log.body.deliveries.find((d: { event_id: string }) => d.event_id === attempts[0]!.headers['webhook-id']);
    expect(stageDelivery).toMatchObject({
      event_type: 'batch.stage_changed',
      state: 'DELIVERED',
      attempts: 2,
      last_status_code: 200,
      next_attempt_at: null,
    });

    // Replay: the same webhook-id and body again
    const before = stageEvents().length;
    const replay = await api('POST', `/webhooks/deliveries/${stageDelivery.delivery_id}/replay`, { token: a.coop });
    expect([replay.status, replay.body.state]).toEqual([202, 'PENDING']);
    const replayed = await waitFor(
      async () => stageEvents(),
      (l) => l.length > before,
      20_000,
    );
    expect(replayed[before]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
    expect(replayed[before]!.raw).toBe(attempts[1]!.raw);
    expect(verify(secretA, replayed[before]!).type).toBe('batch.stage_changed');

    // Rotation: a new secret, and for 24 h both secrets sign
    const rotated = await api('POST', `/webhooks/endpoints/${epA.body.endpoint_id}/rotate-secret`, { token: a.coop });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secretA);
    const count = stageEvents().length;
    expect((await api('POST', `/webhooks/deliveries/${stageDelivery.delivery_id}/replay`, { token: a.coop })).status).toBe(202);
    const afterRotation = await waitFor(
      async () => stageEvents(),
      (l) => l.length > count,
      20_000,
    );
    const last = afterRotation[count]!;
    expect(last.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, last).type).toBe('batch.stage_changed');
    expect(verify(secretA, last).type).toBe('batch.stage_changed');

    // Deleting the endpoint: gone from the list, and no replay through it
    const del = await api('DELETE', `/webhooks/endpoints/${epA.body.endpoint_id}`, { token: a.coop });
    expect(del.status).toBe(200);
    expect(
      (await api('GET', '/webhooks/endpoints', { token: a.coop })).body.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id),
    ).not.toContain(epA.body.endpoint_id);
    expect((await api('POST', `/webhooks/deliveries/${stageDelivery.delivery_id}/replay`, { token: a.coop })).status).toBe(404);
  });

  it("an MFI endpoint receives its own deposit.completed, not another MFI's", async () => {
    const [m1, m2] = [uid('MFI'), uid('MFI')];
    const t1 = await token({ role: 'MFI', mfi_id: m1, sub: `user-${m1}` });
    const t2 = await token({ role: 'MFI', mfi_id: m2, sub: `user-${m2}` });
    const ep1 = await register(t1, '/mfi1', ['deposit.completed']);
    const ep2 = await register(t2, '/mfi2', ['deposit.completed', 'loan.repaid']);
    expect([ep1.status, ep2.status]).toEqual([201, 201]);
    const dep = await api('POST', '/mfi/deposits', { token: t1, body: { source_currency: 'UGX', source_amount: 3_700_000 } });
    expect(dep.status).toBe(202);
    const got = await waitFor(
      async () => received.filter((r) => r.path === '/mfi1' && r.raw.includes(dep.body.payment_id)),
      (l) => l.length > 0,
      30_000,
      250,
    );
    const event = verify(ep1.body.secret, got[0]!);
    expect(event).toMatchObject({ type: 'deposit.completed', data: { payment_id: dep.body.payment_id, mfi_id: m1, status: 'COMPLETED' } });
    expect(event.data.amount_usd_micro).toBeGreaterThan(0);
    const log = await api('GET', `/webhooks/endpoints/${ep1.body.endpoint_id}/deliveries`, { token: t1 });
    expect(log.body.deliveries[0]).toMatchObject({
      event_type: 'deposit.completed',
      state: 'DELIVERED',
      attempts: 1,
      last_status_code: 204,
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(received.filter((r) => r.path === '/mfi2')).toEqual([]);
  });
});
