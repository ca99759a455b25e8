import { auditDeps } from '../../shared/composition/audit';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getBatchAuditRoute } from '../../shared/http/routes/batches';
import { auditView } from '../../shared/http/views';
import { readVerifiedAudit } from '../../shared/use-cases/audit';

/**
 * GET /batch/{id}/audit: `{batch_id, token_id, entries, verified, checks}` (docs/api/batches-and-custody.md#custody-trail).
 * `verified` recomputes the hash chain and compares it with the BatchToken and TraceLog events on
 * chain and with the pinned evidence; `checks` says what matched and what did not. A reader that
 * trusts neither this service nor its flag runs `npm run verify` instead.
 */
export const handler = httpHandler(routeOptions(getBatchAuditRoute), async ({ caller, params }) => ({
  status: 200,
  body: auditView(await readVerifiedAudit(auditDeps(), caller, params.id ?? '')),
}));
