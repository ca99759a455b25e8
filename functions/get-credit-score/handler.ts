import { creditScoreDeps } from '../../shared/composition/lending';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getCreditScoreRoute } from '../../shared/http/routes/farmers';
import { getCreditScore } from '../../shared/use-cases/credit-score';

/** GET /farmers/{id}/credit-score: ADMIN, MFI, or a COOPERATIVE token of the farmer's cooperative. */
export const handler = httpHandler(routeOptions(getCreditScoreRoute), async ({ caller, params }) => {
  return { status: 200, body: await getCreditScore(creditScoreDeps(), caller, params.id ?? '') };
});
