import { auditHash, buildAuditEntry, firstBrokenLink, GENESIS_HASH } from '../../shared/domain/audit';
import {
  auditMessageId,
  formatBatchId,
  formatPayoutId,
  newJobId,
  parseBatchId,
  parseProviderReference,
  providerReference,
  tokenIdForBatch,
} from '../../shared/domain/ids';
import { allowedFrom, isFinal, transition, type PayoutEvent } from '../../shared/domain/payout-lifecycle';
import { maskPhone, normaliseUgandanMobile } from '../../shared/domain/phone';
import { PAYOUT_STATUSES, type AuditEntry, type PayoutStatus } from '../../shared/domain/records';

/** Deterministic PRNG (mulberry32) so property loops are reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ids', () => {
  it('formats batch ids zero-padded and parses them back', () => {
    // Act
    const id = formatBatchId(2025, 42);
    const big = formatBatchId(2025, 1_234_567);

    // Assess
    expect(id).toBe('BATCH-2025-000042');
    expect(parseBatchId(id)).toEqual({ year: 2025, n: 42 });
    expect(big).toBe('BATCH-2025-1234567');
    expect(parseBatchId(big)).toEqual({ year: 2025, n: 1_234_567 });
  });

  it('round-trips many batch numbers (property)', () => {
    // Prepare
    const rnd = prng(3);
    const bad: string[] = [];

    // Act
    for (let i = 0; i < 1_000; i++) {
      const year = 2000 + Math.floor(rnd() * 100);
      const n = 1 + Math.floor(rnd() * 999_999);
      const parsed = parseBatchId(formatBatchId(year, n));
      if (parsed?.year !== year || parsed.n !== n) bad.push(`${year}/${n}`);
    }

    // Assess
    expect(bad).toEqual([]);
  });

  it.each([
    ['BATCH-25-000001'],
    ['BATCH-2025-42'],
    ['batch-2025-000042'],
    ['BATCH-2025-000042x'],
    [' BATCH-2025-000042'],
    ['PAY-2025-000042-01'],
    [''],
  ])('parseBatchId(%p) is null', (id) => {
    // Act + Assess
    expect(parseBatchId(id)).toBeNull();
  });

  it('formats payout ids as PAY-<yyyy>-<nnnnnn>-<ss>', () => {
    // Act + Assess
    expect(formatPayoutId(2025, 42, 1)).toBe('PAY-2025-000042-01');
    expect(formatPayoutId(2025, 123_456, 12)).toBe('PAY-2025-123456-12');
  });

  it('builds a provider reference from payout id and attempt and parses it back', () => {
    // Prepare
    const payoutId = formatPayoutId(2025, 42, 3);

    // Act
    const refs = [1, 2, 3, 4].map((a) => providerReference(payoutId, a));

    // Assess
    expect(refs[0]).toBe('PAY-2025-000042-03-A1');
    expect(refs.map(parseProviderReference)).toEqual([1, 2, 3, 4].map((attempt) => ({ payoutId, attempt })));
  });

  it.each([
    ['PAY-2025-000042-01'],
    ['PAY-2025-000042-01-A'],
    ['PAY-2025-000042-01-A123'],
    ['PAY-2025-000042-01-B1'],
    ['DEP-2025-000042-01-A1'],
    ['PAY-2025-42-01-A1'],
    ['xPAY-2025-000042-01-A1'],
    ['order-123'],
  ])('parseProviderReference(%p) is null (not one of ours)', (ref) => {
    // Act + Assess
    expect(parseProviderReference(ref)).toBeNull();
  });

  it('derives the BatchToken id as year × 10^6 + n, distinct per batch', () => {
    // Act + Assess
    expect(tokenIdForBatch(2025, 42)).toBe(2_025_000_000_000_042n);
    expect(tokenIdForBatch(2025, 1)).not.toBe(tokenIdForBatch(2026, 1));
    expect(tokenIdForBatch(2025, 999_999)).toBe(2_025_000_000_999_999n);
    expect(tokenIdForBatch(2025, 1_000_001)).not.toBe(tokenIdForBatch(2026, 1));
  });

  it('makes job ids JOB-<ULID> and audit message ids AUD-<batch>-<seq>', () => {
    // Act
    const a = newJobId();
    const b = newJobId();

    // Assess
    expect(a).toMatch(/^JOB-[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a).not.toBe(b);
    expect(auditMessageId('BATCH-2025-000042', 3)).toBe('AUD-BATCH-2025-000042-3');
  });
});

describe('phone', () => {
  it.each([['+256772123456'], ['+256700000001'], ['+256782999000']])('accepts the Ugandan mobile %p in E.164', (e164) => {
    // Act + Assess
    expect(normaliseUgandanMobile(e164)).toBe(e164);
  });

  it.each([
    ['+256414123456', 'Kampala landline'],
    ['0772123456', 'national form (requests carry E.164)'],
    ['+256 772 123 456', 'spaced (requests carry E.164)'],
    ['+254712345678', 'Kenyan mobile'],
    ['+25677212345', 'one digit short'],
    ['+2567721234567', 'one digit long'],
    ['abc', 'not a number'],
    ['', 'empty'],
  ])('rejects %p (%s)', (input) => {
    // Act + Assess
    expect(normaliseUgandanMobile(input)).toBeNull();
  });

  it('masks a phone as "+256 7•• ••• 123", hiding all but the first and last three digits', () => {
    // Act
    const masked = maskPhone('+256712345123');

    // Assess
    expect(masked).toBe('+256 7•• ••• 123');
    expect(masked).not.toMatch(/12345/);
  });
});

describe('audit hash chain', () => {
  function chainOf3(): AuditEntry[] {
    const e1 = buildAuditEntry({
      batchId: 'BATCH-2025-000001',
      seq: 1,
      type: 'BATCH_SUBMITTED',
      at: '2025-01-01T00:00:00.000Z',
      actor: 'u1',
      payload: { stage: 'DELIVERED', weight_kg: 60 },
      prevHash: GENESIS_HASH,
    });
    const e2 = buildAuditEntry({
      batchId: 'BATCH-2025-000001',
      seq: 2,
      type: 'STAGE_CHANGED',
      at: '2025-01-02T00:00:00.000Z',
      actor: 'u2',
      payload: { stage: 'GRADED', grade: 'screen18' },
      prevHash: e1.hash,
    });
    const e3 = buildAuditEntry({
      batchId: 'BATCH-2025-000001',
      seq: 3,
      type: 'STAGE_CHANGED',
      at: '2025-01-03T00:00:00.000Z',
      actor: 'u3',
      payload: { stage: 'MILLED', mill_id: 'M1' },
      prevHash: e2.hash,
    });
    return [e1, e2, e3];
  }

  it('verifies an intact chain of three entries linked by SHA-256', () => {
    // Prepare
    const chain = chainOf3();

    // Act
    const broken = firstBrokenLink(chain);

    // Assess
    expect(broken).toBeNull();
    expect(chain.map((e) => e.message_id)).toEqual(['AUD-BATCH-2025-000001-1', 'AUD-BATCH-2025-000001-2', 'AUD-BATCH-2025-000001-3']);
    expect(chain[0]!.prev_hash).toBe(GENESIS_HASH);
    expect(chain[1]!.prev_hash).toBe(chain[0]!.hash);
    expect(chain.every((e) => /^[0-9a-f]{64}$/.test(e.hash))).toBe(true);
  });

  it('hashes canonical JSON, so key order in the payload does not matter', () => {
    // Prepare
    const [e1] = chainOf3();
    const reordered = { ...e1!, payload: { weight_kg: 60, stage: 'DELIVERED' } };

    // Act + Assess
    expect(auditHash(reordered)).toBe(e1!.hash);
  });

  it('detects an altered payload at that entry', () => {
    // Prepare
    const chain = chainOf3();
    chain[1] = { ...chain[1]!, payload: { stage: 'GRADED', grade: 'FAQ' } };

    // Act + Assess
    expect(firstBrokenLink(chain)).toBe(2);
  });

  it('detects an altered stored hash at that entry', () => {
    // Prepare
    const chain = chainOf3();
    chain[2] = { ...chain[2]!, hash: 'f'.repeat(64) };

    // Act + Assess
    expect(firstBrokenLink(chain)).toBe(3);
  });

  it('detects a rewritten entry with a recomputed hash at the next entry', () => {
    // Prepare
    const chain = chainOf3();
    const forged = { ...chain[0]!, actor: 'mallory' };
    chain[0] = { ...forged, hash: auditHash(forged) };

    // Act + Assess
    expect(firstBrokenLink(chain)).toBe(2);
  });

  it('detects swapped order at the first misplaced entry', () => {
    // Prepare
    const [e1, e2, e3] = chainOf3();

    // Act + Assess
    expect(firstBrokenLink([e1!, e3!, e2!])).toBe(3);
    expect(firstBrokenLink([e2!, e1!, e3!])).toBe(2);
  });

  it('detects a removed entry', () => {
    // Prepare
    const [e1, , e3] = chainOf3();

    // Act + Assess
    expect(firstBrokenLink([e1!, e3!])).toBe(3);
  });
});

describe('payout lifecycle', () => {
  const ALL_EVENTS: PayoutEvent[] = [
    { type: 'ORDER_ACCEPTED' },
    { type: 'ATTEMPT_STARTED', attempt: 1 },
    { type: 'ATTEMPT_STARTED', attempt: 2 },
    { type: 'ATTEMPT_STARTED', attempt: 3 },
    { type: 'ATTEMPT_STARTED', attempt: 4 },
    { type: 'SETTLED' },
    { type: 'ORDER_FAILED' },
    { type: 'RETRY_SCHEDULED', retry: 1 },
    { type: 'RETRY_SCHEDULED', retry: 2 },
    { type: 'RETRY_SCHEDULED', retry: 3 },
    { type: 'RETRIES_EXHAUSTED' },
  ];

  it.each<[PayoutStatus, PayoutEvent, PayoutStatus]>([
    ['PENDING', { type: 'ORDER_ACCEPTED' }, 'PROCESSING'],
    ['PROCESSING', { type: 'SETTLED' }, 'COMPLETED'],
    ['PROCESSING', { type: 'ORDER_FAILED' }, 'FAILED'],
    ['RETRY_2', { type: 'ORDER_FAILED' }, 'FAILED'],
    ['RETRY_1', { type: 'SETTLED' }, 'COMPLETED'],
    ['RETRY_3', { type: 'RETRIES_EXHAUSTED' }, 'MANUAL_REVIEW'],
    ['FAILED', { type: 'RETRIES_EXHAUSTED' }, 'MANUAL_REVIEW'],
  ])('%s --%j--> %s', (from, event, to) => {
    // Act
    const next = transition(from, event);

    // Assess
    expect(next?.status).toBe(to);
  });

  it.each([1, 2, 3] as const)('FAILED --RETRY_SCHEDULED(%i)--> RETRY_n with retry_count n', (retry) => {
    // Act
    const next = transition('FAILED', { type: 'RETRY_SCHEDULED', retry });

    // Assess
    expect(next).toEqual({ status: `RETRY_${retry}`, retry_count: retry });
  });

  it('walks the whole failure path: three retries in order, then MANUAL_REVIEW', () => {
    // Prepare
    const steps: PayoutEvent[] = [
      { type: 'ORDER_ACCEPTED' },
      { type: 'ATTEMPT_STARTED', attempt: 1 },
      { type: 'ORDER_FAILED' },
      { type: 'RETRY_SCHEDULED', retry: 1 },
      { type: 'ATTEMPT_STARTED', attempt: 2 },
      { type: 'ORDER_FAILED' },
      { type: 'RETRY_SCHEDULED', retry: 2 },
      { type: 'ATTEMPT_STARTED', attempt: 3 },
      { type: 'ORDER_FAILED' },
      { type: 'RETRY_SCHEDULED', retry: 3 },
      { type: 'ATTEMPT_STARTED', attempt: 4 },
      { type: 'ORDER_FAILED' },
      { type: 'RETRIES_EXHAUSTED' },
    ];
    let status: PayoutStatus = 'PENDING';
    const trail: string[] = [];

    // Act
    for (const event of steps) {
      const next = transition(status, event);
      if (!next) throw new Error(`${event.type} rejected from ${status}`);
      status = next.status;
      trail.push(next.retry_count === undefined ? status : `${status}#${next.retry_count}`);
    }

    // Assess
    expect(trail).toEqual([
      'PROCESSING',
      'PROCESSING',
      'FAILED',
      'RETRY_1#1',
      'RETRY_1',
      'FAILED',
      'RETRY_2#2',
      'RETRY_2',
      'FAILED',
      'RETRY_3#3',
      'RETRY_3',
      'FAILED',
      'MANUAL_REVIEW',
    ]);
    expect(isFinal(status)).toBe(true);
  });

  it.each<[PayoutStatus, 1 | 2 | 3]>([
    ['PROCESSING', 2],
    ['PROCESSING', 3],
    ['RETRY_1', 1],
    ['RETRY_1', 3],
    ['RETRY_2', 1],
    ['RETRY_3', 3],
    ['PENDING', 1],
  ])('rejects RETRY_SCHEDULED out of sequence: from %s retry %i is ignored', (from, retry) => {
    // Act + Assess
    expect(transition(from, { type: 'RETRY_SCHEDULED', retry })).toBeNull();
  });

  it('accepts RETRY_n+1 straight from RETRY_n (retry sequencing)', () => {
    // Act + Assess
    expect(transition('RETRY_1', { type: 'RETRY_SCHEDULED', retry: 2 })).toEqual({ status: 'RETRY_2', retry_count: 2 });
    expect(transition('RETRY_2', { type: 'RETRY_SCHEDULED', retry: 3 })).toEqual({ status: 'RETRY_3', retry_count: 3 });
  });

  it('ignores an attempt start that does not follow its retry', () => {
    // Act + Assess
    expect(transition('RETRY_1', { type: 'ATTEMPT_STARTED', attempt: 3 })).toBeNull();
    expect(transition('PROCESSING', { type: 'ATTEMPT_STARTED', attempt: 2 })).toBeNull();
  });

  it.each(['COMPLETED', 'MANUAL_REVIEW'] as const)('%s is final: every event is ignored', (final) => {
    // Act
    const results = ALL_EVENTS.map((e) => transition(final, e));

    // Assess
    expect(isFinal(final)).toBe(true);
    expect(results).toEqual(ALL_EVENTS.map(() => null));
    expect(ALL_EVENTS.some((e) => allowedFrom(e).includes(final))).toBe(false);
  });

  it('only COMPLETED and MANUAL_REVIEW are final', () => {
    // Act
    const finals = PAYOUT_STATUSES.filter(isFinal);

    // Assess
    expect(finals).toEqual(['COMPLETED', 'MANUAL_REVIEW']);
  });

  it('ignores ORDER_FAILED arriving after SETTLED', () => {
    // Prepare
    const settled = transition('PROCESSING', { type: 'SETTLED' });

    // Act
    const late = transition(settled!.status, { type: 'ORDER_FAILED' });

    // Assess
    expect(settled?.status).toBe('COMPLETED');
    expect(late).toBeNull();
  });

  it('never moves a payout back to PENDING or PROCESSING from a later status', () => {
    // Prepare
    const later: PayoutStatus[] = ['FAILED', 'RETRY_1', 'RETRY_2', 'RETRY_3'];

    // Act
    const backwards = later.flatMap((from) =>
      ALL_EVENTS.map((e) => transition(from, e)?.status).filter((s) => s === 'PENDING' || s === 'PROCESSING'),
    );

    // Assess
    expect(backwards).toEqual([]);
  });
});
