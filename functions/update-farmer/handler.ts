import { farmerUpdateDeps } from '../../shared/composition/farmer-updates';
import { now } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { UpdateFarmerSchema } from '../../shared/http/manual-review-schemas';
import { IdParams, PathId } from '../../shared/http/path-params';
import { farmerView } from '../../shared/http/views';
import { updateFarmerPhone } from '../../shared/use-cases/farmer-updates';

/** PATCH /farmers/{id} `{phone}`: ADMIN, or a COOPERATIVE/AGENT token of the farmer's cooperative (decisions §2, §11). */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE', 'AGENT'], params: IdParams(PathId), body: UpdateFarmerSchema }, async ({ caller, params, body }) => {
  return { status: 200, body: farmerView(await updateFarmerPhone(farmerUpdateDeps(), caller, params.id ?? '', body, now())) };
});
