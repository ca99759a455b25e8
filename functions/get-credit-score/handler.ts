import { creditScoreDeps } from '../../shared/composition/lending';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PathId } from '../../shared/http/path-params';
import { getCreditScore } from '../../shared/use-cases/credit-score';

/** GET /farmers/{id}/credit-score: ADMIN, MFI, or a COOPERATIVE token of the farmer's cooperative. */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE', 'MFI'], params: IdParams(PathId) }, async ({ caller, params }) => {
  return { status: 200, body: await getCreditScore(creditScoreDeps(), caller, params.id ?? '') };
});
