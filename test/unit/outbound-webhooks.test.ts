import type { Caller } from '../../shared/domain/caller';
import {
  endpointOwnerOf,
  endpointReceives,
  MAX_DELIVERY_ATTEMPTS,
  outboundEventsOfChange,
  ownersOf,
  retryDelaySeconds,
  RETRY_SCHEDULE_S,
  signingSecrets,
  subscribableEvents,
  type AttemptResult,
  type OutboundDelivery,
  type OutboundDeliveryMessage,
  type OutboundEndpoint,
  type OutboundEvent,
  type OutboundWebhookStore,
} from '../../shared/domain/outbound-webhooks';
import { isPublicAddress, webhookUrlRefusal } from '../../shared/adapters/outbound-webhooks/http-sender';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvelopeSealer, ensureLocalKeyFile, FileDataKeys } from '../../shared/adapters/secrets/envelope-sealer';
import {
  attemptDelivery,
  openSigningSecrets,
  publishChanges,
  registerEndpoint,
  replayDelivery,
  rotateSecret,
} from '../../shared/use-cases/outbound-webhooks';

/** The local sealer (the same envelope code as in AWS) over a fresh key file. */
const testSealer = new EnvelopeSealer(
  new FileDataKeys(ensureLocalKeyFile(join(mkdtempSync(join(tmpdir(), 'owh-')), 'outbound-secrets.key'))),
);

const coopA: Caller = { sub: 'm', role: 'COOPERATIVE', cooperative_id: 'COOP-A', duties: ['MANAGER'] };
const coopAOfficer: Caller = { sub: 'q', role: 'COOPERATIVE', cooperative_id: 'COOP-A', duties: ['QUALITY_OFFICER'] };
const coopB: Caller = { sub: 'n', role: 'COOPERATIVE', cooperative_id: 'COOP-B', duties: ['MANAGER'] };
const mfi1: Caller = { sub: 'f', role: 'MFI', mfi_id: 'MFI-1', duties: [] };
const admin: Caller = { sub: 'a', role: 'ADMIN', duties: [] };
const agent: Caller = { sub: 'g', role: 'AGENT', cooperative_id: 'COOP-A', duties: [] };

describe('outbound events from item changes (the stream mapper)', () => {
  const batch = (history: Array<{ stage: string; chain_tx_hash: string | null; at: string }>) => ({
    entity: 'BATCH',
    batch_id: 'BATCH-2026-000001',
    cooperative_id: 'COOP-A',
    stage_history: history,
  });

  it('batch.stage_changed once a stage entry gets its chain_tx_hash, with a stable id', () => {
    const pending = batch([
      { stage: 'DELIVERED', chain_tx_hash: '0xaa', at: 't0' },
      { stage: 'GRADED', chain_tx_hash: null, at: 't1' },
    ]);
    const mined = batch([
      { stage: 'DELIVERED', chain_tx_hash: '0xaa', at: 't0' },
      { stage: 'GRADED', chain_tx_hash: '0xbb', at: 't1' },
    ]);
    expect(outboundEventsOfChange(undefined, pending)).toEqual([
      {
        event_id: 'evt_stage_BATCH-2026-000001_DELIVERED',
        type: 'batch.stage_changed',
        timestamp: 't0',
        data: { batch_id: 'BATCH-2026-000001', stage: 'DELIVERED', at: 't0', chain_tx_hash: '0xaa' },
        cooperative_id: 'COOP-A',
      },
    ]);
    expect(outboundEventsOfChange(pending, pending)).toEqual([]);
    expect(outboundEventsOfChange(pending, mined).map((e) => [e.event_id, e.data.stage, e.data.chain_tx_hash])).toEqual([
      ['evt_stage_BATCH-2026-000001_GRADED', 'GRADED', '0xbb'],
    ]);
    expect(outboundEventsOfChange(mined, undefined)).toEqual([]);
  });

  it('payout.completed and payout.manual_review with the phone masked; a completed disbursement is also loan.disbursed', () => {
    const p = {
      entity: 'PAYMENT',
      payment_id: 'PAY-2026-000001-01',
      payment_type: 'FARMER_PAYOUT',
      batch_id: 'B',
      cooperative_id: 'COOP-A',
      status: 'PROCESSING',
      phone: '+256772123456',
      task_token: 'secret-token',
      updated_at: 'u',
      completed_at: 'c',
    };
    const completed = outboundEventsOfChange(p, { ...p, status: 'COMPLETED' });
    expect(completed.map((e) => e.type)).toEqual(['payout.completed']);
    expect(completed[0]!.data).toMatchObject({ payment_id: 'PAY-2026-000001-01', status: 'COMPLETED', phone: '+256 7•• ••• 456' });
    expect(JSON.stringify(completed[0])).not.toContain('secret-token');
    expect(JSON.stringify(completed[0])).not.toContain('+256772123456');
    expect(outboundEventsOfChange({ ...p, status: 'COMPLETED' }, { ...p, status: 'COMPLETED', updated_at: 'later' })).toEqual([]);
    const review = outboundEventsOfChange({ ...p, status: 'RETRY_3' }, { ...p, status: 'MANUAL_REVIEW', resolution_round: 1 });
    expect(review.map((e) => [e.type, e.event_id])).toEqual([['payout.manual_review', 'evt_payout_manual_review_PAY-2026-000001-01_r1']]);
    const disb = { ...p, payment_id: 'DISB-2026-000001', payment_type: 'LOAN_DISBURSEMENT', loan_id: 'LOAN-2026-000001' };
    expect(outboundEventsOfChange(disb, { ...disb, status: 'COMPLETED' }).map((e) => e.type)).toEqual([
      'payout.completed',
      'loan.disbursed',
    ]);
  });

  it('job.completed, dds.generated, loan.repaid and deposit.completed on their status change only', () => {
    const types = (o: Record<string, unknown>, n: Record<string, unknown>) => outboundEventsOfChange(o, n).map((e) => e.type);
    expect(
      types(
        { entity: 'JOB', job_id: 'J', status: 'PENDING', cooperative_id: 'C' },
        { entity: 'JOB', job_id: 'J', status: 'COMPLETE', cooperative_id: 'C' },
      ),
    ).toEqual(['job.completed']);
    expect(types({ entity: 'JOB', job_id: 'J', status: 'PENDING' }, { entity: 'JOB', job_id: 'J', status: 'FAILED' })).toEqual([]);
    expect(
      types(
        { entity: 'DDS', dds_id: 'D', status: 'SUBMITTED' },
        { entity: 'DDS', dds_id: 'D', status: 'AVAILABLE', reference_number: 'R' },
      ),
    ).toEqual(['dds.generated']);
    expect(types({ entity: 'LOAN', loan_id: 'L', status: 'ACTIVE' }, { entity: 'LOAN', loan_id: 'L', status: 'REPAID' })).toEqual([
      'loan.repaid',
    ]);
    const dep = outboundEventsOfChange(
      { entity: 'DEPOSIT', payment_id: 'DEP-1', mfi_id: 'MFI-1', status: 'PROCESSING' },
      { entity: 'DEPOSIT', payment_id: 'DEP-1', mfi_id: 'MFI-1', status: 'COMPLETED' },
    );
    expect(dep.map((e) => [e.type, e.mfi_id, e.cooperative_id])).toEqual([['deposit.completed', 'MFI-1', undefined]]);
    expect(types({ entity: 'OWH_DELIVERY', status: 'x' }, { entity: 'OWH_DELIVERY', status: 'COMPLETED' })).toEqual([]);
  });
});

describe('who manages endpoints and who receives what', () => {
  it('ADMIN, a cooperative MANAGER and an MFI own endpoints; others are refused', () => {
    expect(endpointOwnerOf(admin)).toEqual({ kind: 'ADMIN' });
    expect(endpointOwnerOf(coopA)).toEqual({ kind: 'COOPERATIVE', id: 'COOP-A' });
    expect(endpointOwnerOf(mfi1)).toEqual({ kind: 'MFI', id: 'MFI-1' });
    for (const c of [coopAOfficer, agent])
      expect(() => endpointOwnerOf(c)).toThrow(expect.objectContaining({ code: 'INSUFFICIENT_PERMISSIONS' }));
    expect(subscribableEvents({ kind: 'MFI', id: 'x' })).toEqual(['deposit.completed', 'loan.disbursed', 'loan.repaid']);
    expect(subscribableEvents({ kind: 'COOPERATIVE', id: 'x' })).not.toContain('deposit.completed');
  });

  it("a cooperative endpoint receives only its own batches' events; an MFI its own deposits and every loan event", () => {
    const ep = (owner: OutboundEndpoint['owner'], events = subscribableEvents(owner)) => ({
      status: 'ACTIVE' as const,
      owner,
      events: [...events],
    });
    const stageA = { type: 'batch.stage_changed' as const, cooperative_id: 'COOP-A' };
    expect(endpointReceives(ep({ kind: 'COOPERATIVE', id: 'COOP-A' }), stageA)).toBe(true);
    expect(endpointReceives(ep({ kind: 'COOPERATIVE', id: 'COOP-B' }), stageA)).toBe(false);
    expect(endpointReceives(ep({ kind: 'ADMIN' }), stageA)).toBe(true);
    expect(endpointReceives({ ...ep({ kind: 'COOPERATIVE', id: 'COOP-A' }), status: 'DISABLED' }, stageA)).toBe(false);
    expect(endpointReceives(ep({ kind: 'COOPERATIVE', id: 'COOP-A' }, ['payout.completed']), stageA)).toBe(false);
    expect(endpointReceives(ep({ kind: 'MFI', id: 'MFI-1' }), { type: 'deposit.completed', mfi_id: 'MFI-1' })).toBe(true);
    expect(endpointReceives(ep({ kind: 'MFI', id: 'MFI-2' }), { type: 'deposit.completed', mfi_id: 'MFI-1' })).toBe(false);
    expect(endpointReceives(ep({ kind: 'MFI', id: 'MFI-2' }), { type: 'loan.repaid', cooperative_id: 'COOP-A' })).toBe(true);
    expect(endpointReceives(ep({ kind: 'MFI', id: 'MFI-2' }, ['batch.stage_changed']), stageA)).toBe(false);
    expect(ownersOf({ type: 'loan.disbursed', cooperative_id: 'COOP-A' })).toEqual({
      owners: ['ADMIN', 'COOPERATIVE#COOP-A'],
      allMfis: true,
    });
  });

  it('both secrets sign during the 24 h after a rotation, then only the new one', () => {
    const e = { secret: 'new', previous_secret: 'old', previous_secret_expires_at: '2026-01-02T00:00:00.000Z' };
    expect(signingSecrets(e, new Date('2026-01-01T12:00:00Z'))).toEqual(['new', 'old']);
    expect(signingSecrets(e, new Date('2026-01-02T00:00:01Z'))).toEqual(['new']);
  });
});

describe('the Standard Webhooks retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up (8 attempts), scaled locally', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(n))).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(retryDelaySeconds(8)).toBeNull();
    expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
    expect(retryDelaySeconds(1, 0.01)).toBeCloseTo(0.05);
    expect(RETRY_SCHEDULE_S).toHaveLength(7);
  });
});

describe('SSRF guard', () => {
  it('only public addresses pass', () => {
    for (const ip of [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '127.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::',
      '2001:db8::1',
    ]) {
      expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect([ip, isPublicAddress(ip)]).toEqual([ip, true]);
    expect(isPublicAddress('not-an-ip')).toBe(false);
  });

  it('in AWS: https to public addresses only; locally loopback http too', async () => {
    expect(await webhookUrlRefusal('http://8.8.8.8/hook', false)).toBe('must be an https URL');
    expect(await webhookUrlRefusal('https://8.8.8.8/hook', false)).toBeNull();
    expect(await webhookUrlRefusal('https://127.0.0.1/hook', false)).toMatch(/not a public address/);
    expect(await webhookUrlRefusal('https://[::ffff:169.254.169.254]/latest', false)).toMatch(/not a public address/);
    expect(await webhookUrlRefusal('https://user:pw@8.8.8.8/', false)).toBe('must not carry credentials');
    expect(await webhookUrlRefusal('ftp://8.8.8.8/', false)).toBe('must be an https URL');
    expect(await webhookUrlRefusal('http://127.0.0.1:9/hook', true)).toBeNull();
    expect(await webhookUrlRefusal('http://10.0.0.1/hook', true)).toMatch(/not a public address/);
    expect(await webhookUrlRefusal('http://8.8.8.8/hook', true)).toMatch(/https/);
  });
});

/** In-memory store (conditional updates on the token, as the DynamoDB store). */
class MemoryStore implements OutboundWebhookStore {
  endpoints = new Map<string, OutboundEndpoint>();
  deliveries = new Map<string, OutboundDelivery>();
  async createEndpoint(e: OutboundEndpoint) {
    this.endpoints.set(e.endpoint_id, structuredClone(e));
  }
  async getEndpoint(id: string) {
    return structuredClone(this.endpoints.get(id) ?? null);
  }
  async listEndpoints(owner: string) {
    return [...this.endpoints.values()].filter(
      (e) => e.status !== 'DELETED' && (e.owner.kind === 'ADMIN' ? 'ADMIN' : `${e.owner.kind}#${e.owner.id}`) === owner,
    );
  }
  async listMfiEndpoints() {
    return [...this.endpoints.values()].filter((e) => e.status === 'ACTIVE' && e.owner.kind === 'MFI');
  }
  async updateEndpoint(id: string, set: Partial<OutboundEndpoint>, _at: string, whilePlaintext?: string) {
    const e = this.endpoints.get(id);
    if (!e || e.status === 'DELETED') return false;
    if (whilePlaintext !== undefined && e.secret !== whilePlaintext) return false;
    Object.assign(e, set);
    for (const [k, v] of Object.entries(set)) if (v === undefined) Reflect.deleteProperty(e, k);
    return true;
  }
  async ensureDelivery(endpointId: string, event: OutboundEvent, token: string, at: string) {
    const id = `whd_${endpointId}_${event.event_id}`;
    const existing = this.deliveries.get(id);
    if (existing) return { delivery: structuredClone(existing), created: false };
    const d: OutboundDelivery = {
      delivery_id: id,
      endpoint_id: endpointId,
      event,
      state: 'PENDING',
      attempts: 0,
      round_attempts: 0,
      pending_token: token,
      next_attempt_at: at,
      created_at: at,
      updated_at: at,
    };
    this.deliveries.set(id, d);
    return { delivery: structuredClone(d), created: true };
  }
  async getDelivery(id: string) {
    return structuredClone(this.deliveries.get(id) ?? null);
  }
  async listDeliveries() {
    return { items: [...this.deliveries.values()] };
  }
  async updateDelivery(id: string, token: string, set: Partial<OutboundDelivery>) {
    const d = this.deliveries.get(id);
    if (!d || (d.pending_token ?? '') !== token) return false;
    const next: OutboundDelivery = { ...d, ...set };
    for (const [k, v] of Object.entries(set)) if (v === undefined) Reflect.deleteProperty(next, k);
    this.deliveries.set(id, next);
    return true;
  }
}

function harness(answers: AttemptResult[]) {
  const store = new MemoryStore();
  const sent: Array<{ msg: OutboundDeliveryMessage; delaySeconds?: number }> = [];
  const calls: Array<{ url: string; secrets: string[]; eventId: string; body: string }> = [];
  let clock = new Date('2026-11-22T10:00:00.000Z');
  let n = 0;
  const deps = {
    store,
    queue: {
      send: async (msg: OutboundDeliveryMessage, o?: { delaySeconds?: number }) => {
        sent.push({ msg, delaySeconds: o?.delaySeconds });
      },
    },
    now: () => clock,
    newId: (p: string) => `${p}${String(++n).padStart(26, '0')}`,
    newSecret: () => `whsec_${Buffer.from(`secret-${++n}`).toString('base64')}`,
    sender: {
      send: async (i: { url: string; secrets: string[]; eventId: string; body: string }) => {
        calls.push(i);
        return answers.shift() ?? { status_code: 200 };
      },
    },
    timeScale: 1,
    sealer: testSealer,
    guard: { refusal: async (url: string) => (url.startsWith('https://') ? null : 'must be an https URL') },
  };
  return { store, sent, calls, deps, advance: (s: number) => (clock = new Date(clock.getTime() + s * 1000)) };
}

describe('delivery attempts', () => {
  const stageChange = {
    oldImage: undefined,
    newImage: {
      entity: 'BATCH',
      batch_id: 'BATCH-2026-000009',
      cooperative_id: 'COOP-A',
      stage_history: [{ stage: 'DELIVERED', chain_tx_hash: '0xcc', at: '2026-11-22T09:59:00.000Z' }],
    },
  };

  it('fans out once per subscribed endpoint, retries a 500 on the schedule with SQS hops, and ends DEAD after 8 attempts', async () => {
    const h = harness(Array.from({ length: 8 }, () => ({ status_code: 500 })));
    const epA = await registerEndpoint(h.deps, coopA, { url: 'https://example.org/a', events: ['batch.stage_changed'] });
    await registerEndpoint(h.deps, coopB, { url: 'https://example.org/b', events: ['batch.stage_changed'] });
    expect(await publishChanges(h.deps, [stageChange])).toBe(1);
    expect(await publishChanges(h.deps, [stageChange])).toBe(0); // the same change again: no second delivery
    const first = h.sent[0]!.msg;
    expect(await attemptDelivery(h.deps, first)).toBe('FAILED');
    expect(h.calls[0]).toMatchObject({
      url: 'https://example.org/a',
      secrets: [epA.secret],
      eventId: 'evt_stage_BATCH-2026-000009_DELIVERED',
    });
    expect(JSON.parse(h.calls[0]!.body)).toEqual({
      type: 'batch.stage_changed',
      timestamp: '2026-11-22T09:59:00.000Z',
      data: { batch_id: 'BATCH-2026-000009', stage: 'DELIVERED', at: '2026-11-22T09:59:00.000Z', chain_tx_hash: '0xcc' },
    });
    expect(await attemptDelivery(h.deps, first)).toBeNull(); // a stale (duplicate) message does nothing
    // Each message is delivered when SQS would (its DelaySeconds, at most 900): a longer wait is made of hops.
    let state: string | null = 'FAILED';
    for (let guard = 0; state === 'FAILED' && guard < 500; guard++) {
      const last = h.sent[h.sent.length - 1]!;
      expect(last.delaySeconds ?? 0).toBeLessThanOrEqual(900);
      h.advance(last.delaySeconds ?? 0);
      state = await attemptDelivery(h.deps, last.msg);
    }
    expect(h.sent.length).toBeGreaterThan(8 + 40); // 7 waits of 5 s … 10 h in hops of ≤ 900 s
    expect(state).toBe('DEAD');
    expect(h.calls).toHaveLength(8);
    const d = [...h.store.deliveries.values()][0]!;
    expect(d).toMatchObject({ state: 'DEAD', attempts: 8, last_status_code: 500 });
  });

  it('2xx is DELIVERED; 410 disables the endpoint; replay starts the schedule again with the same event', async () => {
    const h = harness([{ status_code: 410 }]);
    const ep = await registerEndpoint(h.deps, coopA, { url: 'https://example.org/a', events: ['batch.stage_changed'] });
    await publishChanges(h.deps, [stageChange]);
    expect(await attemptDelivery(h.deps, h.sent[0]!.msg)).toBe('DEAD');
    expect(h.store.endpoints.get(ep.endpoint_id)).toMatchObject({ status: 'DISABLED' });
    const d = [...h.store.deliveries.values()][0]!;
    await expect(replayDelivery(h.deps, coopA, d.delivery_id)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });

    const h2 = harness([{ status_code: 204 }]);
    await registerEndpoint(h2.deps, coopA, { url: 'https://example.org/a', events: ['batch.stage_changed'] });
    await publishChanges(h2.deps, [stageChange]);
    expect(await attemptDelivery(h2.deps, h2.sent[0]!.msg)).toBe('DELIVERED');
    const delivered = [...h2.store.deliveries.values()][0]!;
    await expect(replayDelivery(h2.deps, coopB, delivered.delivery_id)).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    const replayed = await replayDelivery(h2.deps, coopA, delivered.delivery_id);
    expect(replayed).toMatchObject({ state: 'PENDING', round_attempts: 0 });
    expect(await attemptDelivery(h2.deps, h2.sent[h2.sent.length - 1]!.msg)).toBe('DELIVERED');
    expect(h2.calls.map((c) => c.eventId)).toEqual(['evt_stage_BATCH-2026-000009_DELIVERED', 'evt_stage_BATCH-2026-000009_DELIVERED']);
    expect(h2.calls[1]!.body).toBe(h2.calls[0]!.body);
  });

  it('registration refuses other callers, foreign events and refused URLs; rotation keeps the old secret 24 h', async () => {
    const h = harness([]);
    await expect(registerEndpoint(h.deps, agent, { url: 'https://example.org', events: ['batch.stage_changed'] })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
    await expect(registerEndpoint(h.deps, mfi1, { url: 'https://example.org', events: ['batch.stage_changed'] })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'events[0]' }],
    });
    await expect(registerEndpoint(h.deps, coopA, { url: 'http://example.org', events: ['batch.stage_changed'] })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'url', message: 'must be an https URL' }],
    });
    const ep = await registerEndpoint(h.deps, coopA, { url: 'https://example.org', events: ['batch.stage_changed'] });
    await expect(rotateSecret(h.deps, coopB, ep.endpoint_id)).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    const rotated = await rotateSecret(h.deps, coopA, ep.endpoint_id);
    expect(rotated.secret).not.toBe(ep.secret);
    const stored = h.store.endpoints.get(ep.endpoint_id)!;
    expect(await openSigningSecrets(h.deps, stored, h.deps.now())).toEqual([rotated.secret, ep.secret]);
    expect(rotated.previous_secret_expires_at).toBe('2026-11-23T10:00:00.000Z');
    h.advance(24 * 3600 + 1);
    expect(await openSigningSecrets(h.deps, stored, h.deps.now())).toEqual([rotated.secret]);
  });

  it('stores signing secrets sealed (bound to the endpoint id), never in plaintext', async () => {
    const h = harness([]);
    const ep = await registerEndpoint(h.deps, coopA, { url: 'https://example.org', events: ['batch.stage_changed'] });
    const stored = h.store.endpoints.get(ep.endpoint_id)!;
    expect(ep.secret).toMatch(/^whsec_/);
    expect(stored.secret).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain(ep.secret);
    expect(JSON.stringify(stored)).not.toContain(ep.secret.slice('whsec_'.length));
    expect(await testSealer.open(stored.sealed_secret!, ep.endpoint_id)).toBe(ep.secret);
    // Copied onto another endpoint, the sealed secret does not open.
    await expect(testSealer.open(stored.sealed_secret!, 'whe_OTHER')).rejects.toThrow();
  });

  it('migrates a plaintext secret (an endpoint registered before sealing) at its next delivery, and signs with it', async () => {
    const h = harness([{ status_code: 200 }]);
    const legacy: OutboundEndpoint = {
      endpoint_id: 'whe_LEGACY',
      owner: { kind: 'COOPERATIVE', id: 'COOP-A' },
      url: 'https://example.org/legacy',
      events: ['batch.stage_changed'],
      status: 'ACTIVE',
      secret: 'whsec_bGVnYWN5LXNlY3JldA==',
      previous_secret: 'whsec_b2xkLXNlY3JldA==',
      previous_secret_expires_at: '2026-11-22T12:00:00.000Z',
      created_at: 'c',
      created_by: 'm',
      updated_at: 'u',
    };
    await h.store.createEndpoint(legacy);
    await publishChanges(h.deps, [stageChange]);
    expect(await attemptDelivery(h.deps, h.sent[0]!.msg)).toBe('DELIVERED');
    expect(h.calls[0]!.secrets).toEqual(['whsec_bGVnYWN5LXNlY3JldA==', 'whsec_b2xkLXNlY3JldA==']);
    const stored = h.store.endpoints.get('whe_LEGACY')!;
    expect([stored.secret, stored.previous_secret]).toEqual([undefined, undefined]);
    expect(JSON.stringify(stored)).not.toContain('whsec_');
    expect(await openSigningSecrets(h.deps, stored, h.deps.now())).toEqual(['whsec_bGVnYWN5LXNlY3JldA==', 'whsec_b2xkLXNlY3JldA==']);
  });

  it('a rotation of a plaintext endpoint seals the old secret as the previous one and removes the plaintext', async () => {
    const h = harness([]);
    await h.store.createEndpoint({
      endpoint_id: 'whe_LEGACY2',
      owner: { kind: 'COOPERATIVE', id: 'COOP-A' },
      url: 'https://example.org/l',
      events: ['batch.stage_changed'],
      status: 'ACTIVE',
      secret: 'whsec_cGxhaW4=',
      created_at: 'c',
      created_by: 'm',
      updated_at: 'u',
    });
    const rotated = await rotateSecret(h.deps, coopA, 'whe_LEGACY2');
    const stored = h.store.endpoints.get('whe_LEGACY2')!;
    expect(stored.secret).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain('whsec_');
    expect(await openSigningSecrets(h.deps, stored, h.deps.now())).toEqual([rotated.secret, 'whsec_cGxhaW4=']);
  });
});
