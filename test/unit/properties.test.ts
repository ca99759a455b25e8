import fc from 'fast-check';
import { buildAuditEntry, firstBrokenLink, GENESIS_HASH } from '../../shared/domain/audit';
import { DomainError } from '../../shared/domain/errors';
import {
  decimalStringToMicro,
  microForUgx,
  microToDecimalString,
  microToUsdc,
  MICRO_PER_USDC,
  ugxForMicro,
  ugxForWeight,
  usdcToMicro,
} from '../../shared/domain/money';
import { allowedFrom, FINAL_STATUSES, MAX_ATTEMPTS, transition, type PayoutEvent } from '../../shared/domain/payout-lifecycle';
import { PAYOUT_STATUSES, type AuditEntry, type PayoutStatus } from '../../shared/domain/records';
import { SubmitBatchSchema } from '../../shared/http/schemas';
import { validate } from '../../shared/http/validation';
import { onTheWire } from './support/errors';

/**
 * Property tests (fast-check, 1,000 runs each): money conversions, the payout transition table,
 * the audit hash chain and the batch-submission schema. On a failure fast-check prints the seed and
 * the shrunk counterexample; replay it with `fc.assert(…, { seed, path })`.
 */

const RUNS = { numRuns: 1_000 };

/** An exchange rate as the provider quotes it: UGX per USDC with up to 2 decimals, 1,000–9,999.99. */
const rate = fc
  .tuple(fc.integer({ min: 1_000, max: 9_999 }), fc.integer({ min: 0, max: 99 }))
  .map(([u, c]) => `${u}.${String(c).padStart(2, '0')}`);
/** Micro-USDC of a payout: 1 micro-USDC to 100,000 USDC. */
const micro = fc.integer({ min: 1, max: 100_000 * MICRO_PER_USDC });

describe('money', () => {
  it('micro-USDC → USDC number → micro-USDC is the identity', () => {
    fc.assert(
      fc.property(micro, (m) => usdcToMicro(microToUsdc(m)) === m),
      RUNS,
    );
  });

  it('micro-USDC → decimal string → micro-USDC is the identity, negatives and zero included', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (m) => decimalStringToMicro(microToDecimalString(m)) === m),
      RUNS,
    );
  });

  it('microForUgx is the least micro-USDC that buys the shillings: it buys them, one micro-USDC less does not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400_000_000 }), rate, (ugx, r) => {
        const m = microForUgx(ugx, r);
        return Number.isSafeInteger(m) && ugxForMicro(m, r) >= ugx && ugxForMicro(m - 1, r) < ugx;
      }),
      RUNS,
    );
  });

  it('ugxForMicro gives whole shillings, never more than the exact value, and grows with the amount', () => {
    fc.assert(
      fc.property(micro, micro, rate, (a, b, r) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const ugx = ugxForMicro(lo, r);
        return Number.isInteger(ugx) && ugx <= (lo * Number(r)) / MICRO_PER_USDC + 1e-6 && ugx <= ugxForMicro(hi, r);
      }),
      RUNS,
    );
  });

  it('the batch payment is whole shillings within half a shilling of weight × price', () => {
    const weight = fc.integer({ min: 1_000, max: 5_000_000 }).map((g) => g / 1000); // 1–5,000 kg, gram precision
    fc.assert(
      fc.property(weight, fc.integer({ min: 0, max: 1_000_000 }), (kg, price) => {
        const ugx = ugxForWeight(kg, price);
        return Number.isSafeInteger(ugx) && Math.abs(ugx - kg * price) <= 0.5 + 1e-6;
      }),
      RUNS,
    );
  });

  it('refuses a USDC amount it cannot hold exactly (more than 6 decimals, ≤ 0, non-finite)', () => {
    const bad = fc.oneof(
      fc.double({ noNaN: false }).filter((x) => !Number.isFinite(x) || x <= 0),
      fc.integer({ min: 1, max: 99_999 }).map((u) => u + 1e-7),
    );
    fc.assert(
      fc.property(bad, (x) => {
        try {
          usdcToMicro(x);
          return false;
        } catch (err) {
          return err instanceof DomainError && err.code === 'VALIDATION_ERROR';
        }
      }),
      RUNS,
    );
  });
});

/** Every event the payout lifecycle knows. */
const event: fc.Arbitrary<PayoutEvent> = fc.oneof(
  fc.constant<PayoutEvent>({ type: 'ORDER_ACCEPTED' }),
  fc.integer({ min: 1, max: MAX_ATTEMPTS }).map((attempt): PayoutEvent => ({ type: 'ATTEMPT_STARTED', attempt })),
  fc.constant<PayoutEvent>({ type: 'SETTLED' }),
  fc.constant<PayoutEvent>({ type: 'ORDER_FAILED' }),
  fc.constantFrom(1 as const, 2 as const, 3 as const).map((retry): PayoutEvent => ({ type: 'RETRY_SCHEDULED', retry })),
  fc.constant<PayoutEvent>({ type: 'RETRIES_EXHAUSTED' }),
);

describe('payout transitions', () => {
  it('apply exactly from the statuses allowedFrom names, and never out of a final status', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PAYOUT_STATUSES), event, (from: PayoutStatus, e) => {
        const next = transition(from, e);
        const allowed = allowedFrom(e).includes(from);
        return (next !== null) === allowed && !(FINAL_STATUSES.includes(from) && next !== null);
      }),
      RUNS,
    );
  });

  it('under any sequence of events (replays, reordering), a payout is completed at most once, stays final, and its retries never go back', () => {
    // As the store applies them: every event is also conditioned on the payout's current attempt
    // (shared/adapters/dynamodb/payout-repo.ts): attempt N starts from attempt N or N-1, and retry N
    // is scheduled only after attempt N failed. The status table alone does not know the attempt.
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        let status: PayoutStatus = 'PENDING';
        let attempt = 1;
        let completions = 0;
        let retryCount = 0;
        for (const e of events) {
          if (e.type === 'ATTEMPT_STARTED' && e.attempt !== attempt && e.attempt !== attempt + 1) continue;
          if (e.type === 'RETRY_SCHEDULED' && e.retry !== attempt) continue;
          const next = transition(status, e);
          if (!next) continue;
          if (FINAL_STATUSES.includes(status)) return false;
          if (next.status === 'COMPLETED') completions++;
          if (e.type === 'ATTEMPT_STARTED') attempt = e.attempt;
          if (next.retry_count !== undefined) {
            if (next.retry_count < retryCount) return false;
            retryCount = next.retry_count;
          }
          status = next.status;
        }
        return completions <= 1 && retryCount <= MAX_ATTEMPTS - 1;
      }),
      RUNS,
    );
  });
});

/** A JSON payload as audit entries carry them. */
const payload = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 });

function chain(batchId: string, payloads: Array<Record<string, unknown>>): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let prev = GENESIS_HASH;
  payloads.forEach((p, i) => {
    const e = buildAuditEntry({
      batchId,
      seq: i + 1,
      type: 'STAGE_CHANGED',
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      actor: 'officer',
      payload: p,
      prevHash: prev,
    });
    entries.push(e);
    prev = e.hash;
  });
  return entries;
}

describe('audit hash chain', () => {
  it('verifies when built in order, and names the first entry whose payload was rewritten', () => {
    fc.assert(
      fc.property(fc.array(payload, { minLength: 1, maxLength: 8 }), fc.nat(), payload, (payloads, pick, forged) => {
        const entries = chain('BATCH-2026-000001', payloads);
        if (firstBrokenLink(entries) !== null) return false;
        const i = pick % entries.length;
        const rewritten = entries.map((e, j) => (j === i ? { ...e, payload: forged } : e));
        const changed = JSON.stringify(forged) !== JSON.stringify(entries[i]!.payload);
        return firstBrokenLink(rewritten) === (changed ? i + 1 : null);
      }),
      RUNS,
    );
  });

  it('catches a rewritten entry whose hash was recomputed: the next entry no longer links to it', () => {
    fc.assert(
      fc.property(fc.array(payload, { minLength: 2, maxLength: 8 }), fc.nat(), payload, (payloads, pick, forged) => {
        const entries = chain('BATCH-2026-000001', payloads);
        const i = pick % (entries.length - 1);
        if (JSON.stringify(forged) === JSON.stringify(entries[i]!.payload)) return true;
        const e = entries[i]!;
        const rehashed = buildAuditEntry({
          batchId: e.batch_id,
          seq: e.sequence_number,
          type: e.type,
          at: e.at,
          actor: e.actor,
          payload: forged,
          prevHash: e.prev_hash,
        });
        return firstBrokenLink(entries.map((x, j) => (j === i ? rehashed : x))) === i + 2;
      }),
      RUNS,
    );
  });
});

describe('batch submission schema', () => {
  const codes = new Set(['VALIDATION_ERROR', 'INVALID_GRADE', 'WEIGHT_OUT_OF_RANGE']);
  const rules = [
    { path: 'weight_kg', types: ['min_value', 'max_value'], code: 'WEIGHT_OUT_OF_RANGE' as const },
    { path: 'grade', types: ['picklist'], code: 'INVALID_GRADE' as const },
  ];

  it('answers any JSON value with the body or a 400-class domain error, never anything else', () => {
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          farmer_id: fc.oneof(fc.string(), fc.integer()),
          cooperative_id: fc.string(),
          weight_kg: fc.oneof(fc.double(), fc.integer(), fc.string()),
          grade: fc.string(),
          moisture_pct: fc.double(),
          collection_point_gps: fc.record({ lat: fc.double(), lng: fc.double() }),
          collector_agent_id: fc.string(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(body, (b) => {
        try {
          validate(SubmitBatchSchema, b, rules);
          return true;
        } catch (err) {
          return err instanceof DomainError && codes.has(err.code) && onTheWire(err).status === 400;
        }
      }),
      RUNS,
    );
  });

  it('accepts every well-formed delivery', () => {
    const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,30}$/);
    const delivery = fc.record({
      farmer_id: id,
      cooperative_id: id,
      collector_agent_id: id,
      weight_kg: fc.integer({ min: 1_000, max: 5_000_000 }).map((g) => g / 1000),
      grade: fc.constantFrom('screen18', 'screen15', 'FAQ', 'PB'),
      moisture_pct: fc.integer({ min: 0, max: 10_000 }).map((x) => x / 100),
      collection_point_gps: fc.record({
        lat: fc.integer({ min: -900_000, max: 900_000 }).map((x) => x / 10_000),
        lng: fc.integer({ min: -1_800_000, max: 1_800_000 }).map((x) => x / 10_000),
      }),
    });
    fc.assert(
      fc.property(delivery, (d) => {
        validate(SubmitBatchSchema, d, rules);
        return true;
      }),
      RUNS,
    );
  });
});
