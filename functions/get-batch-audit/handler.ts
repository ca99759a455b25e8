import { chainTrailOf, evidenceFetcher } from '../../shared/composition/audit';
import { batchRepo } from '../../shared/composition/repos';
import { verifyAuditTrail } from '../../shared/domain/audit-verify';
import { DomainError } from '../../shared/domain/errors';
import { httpHandler } from '../../shared/http/handler';
import { readAuditEntries } from '../../shared/use-cases/custody';

/**
 * GET /batch/{id}/audit: `{batch_id, token_id, entries, verified, checks}` (decisions §8).
 * `verified` recomputes the hash chain and compares it with the BatchToken and TraceLog events on
 * chain and with the pinned evidence; `checks` says what matched and what did not. A reader that
 * trusts neither this service nor its flag runs `npm run verify` instead.
 */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE', 'AGENT'] }, async ({ caller, params }) => {
  const { batch, entries } = await readAuditEntries(batchRepo(), caller, params.id ?? '');
  let chain;
  try {
    chain = await chainTrailOf(BigInt(batch.token_id));
  } catch (err) {
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to verify the trail: ${(err as Error).message}`);
  }
  const result = await verifyAuditTrail({ batchId: batch.batch_id, entries, chain, fetchEvidence: evidenceFetcher() });
  return { status: 200, body: { batch_id: batch.batch_id, token_id: batch.token_id, entries, verified: result.verified, checks: result.checks } };
});
