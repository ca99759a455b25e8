import { ulid } from 'ulid';

/**
 * Identifier formats (docs/api/conventions.md#identifiers-money-and-time).
 *   batch   BATCH-<yyyy>-<nnnnnn>          (atomic counter per year)
 *   payout  PAY-<yyyy>-<nnnnnn>-<ss>       (the batch's number, 2-digit sequence per batch)
 *   loan    LOAN-<yyyy>-<nnnnnn>           (atomic counter per year; its disbursement DISB-<yyyy>-<nnnnnn>)
 *   job     JOB-<ULID>
 *   audit   AUD-<batch_id>-<sequence>
 * A BatchToken id is derived from the batch id (yyyy × 10^12 + n: room for far more batches a year
 * than the 6-digit number shows before two years could collide), so a replayed mint names the same
 * token and reverts instead of minting twice.
 */

export function formatBatchId(year: number, n: number): string {
  return `BATCH-${year}-${String(n).padStart(6, '0')}`;
}

/** Parses `BATCH-yyyy-nnnnnn`; null when malformed. */
export function parseBatchId(id: string): { year: number; n: number } | null {
  const m = /^BATCH-(\d{4})-(\d{6,})$/.exec(id);
  return m ? { year: Number(m[1]), n: Number(m[2]) } : null;
}

/** The BatchToken id of a batch. */
export function tokenIdForBatch(year: number, n: number): bigint {
  return BigInt(year) * 1_000_000_000_000n + BigInt(n);
}

export function formatPayoutId(batchYear: number, batchN: number, seq: number): string {
  return `PAY-${batchYear}-${String(batchN).padStart(6, '0')}-${String(seq).padStart(2, '0')}`;
}

/** The provider order reference of one attempt: `<payout_id>-A<attempt>` (docs/api/payouts.md#payout-lifecycle). */
export function providerReference(payoutId: string, attempt: number): string {
  return `${payoutId}-A${attempt}`;
}

/** Parses a provider reference back into payout id and attempt; null when it is not ours. */
export function parseProviderReference(ref: string): { payoutId: string; attempt: number } | null {
  const m = /^((?:PAY-\d{4}-\d{6,}-\d{2,})|(?:DISB-\d{4}-\d{6,}))-A(\d{1,2})$/.exec(ref);
  return m ? { payoutId: m[1]!, attempt: Number(m[2]) } : null;
}

/** `LOAN-<yyyy>-<nnnnnn>` (atomic counter per year). */
export function formatLoanId(year: number, n: number): string {
  return `LOAN-${year}-${String(n).padStart(6, '0')}`;
}

/** The LOAN_DISBURSEMENT payment of a loan: `DISB-<yyyy>-<nnnnnn>`, the loan's own year and number. */
export function disbursementIdOf(loanId: string): string {
  return loanId.replace(/^LOAN-/, 'DISB-');
}

/** Random bytes for {@link newUlid}, drawn from the platform's CSPRNG (`crypto.getRandomValues`) 4 KiB at a time. */
const ULID_RANDOM = new Uint8Array(4096);
let ulidRandomAt = ULID_RANDOM.length;

/** The next CSPRNG byte as a fraction in [0, 1), the form ulid's `prng` argument takes (byte / 256, as ulid's own PRNG). */
function ulidRandomFraction(): number {
  if (ulidRandomAt === ULID_RANDOM.length) {
    crypto.getRandomValues(ULID_RANDOM);
    ulidRandomAt = 0;
  }
  return ULID_RANDOM[ulidRandomAt++]! / 256;
}

/**
 * A new ULID: 48 bits of the current time and 80 random bits, the random part from the CSPRNG.
 * What `ulid()` makes, but its default PRNG asks the CSPRNG for one byte per character (16 calls a
 * ULID) and is looked up again on every call; here the bytes come from a buffer refilled 4 KiB at
 * a time (request ids, job ids, upload ids and delivery tokens are made on every request).
 */
export function newUlid(): string {
  return ulid(undefined, ulidRandomFraction);
}

export function newJobId(): string {
  return `JOB-${newUlid()}`;
}

export function auditMessageId(batchId: string, seq: number): string {
  return `AUD-${batchId}-${seq}`;
}
