import { registryRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PathId } from '../../shared/http/path-params';
import { cooperativeView } from '../../shared/http/views';
import { getCooperative } from '../../shared/use-cases/registry';

/** GET /cooperatives/{id}: ADMIN, or a COOPERATIVE/AGENT token of that cooperative. */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE', 'AGENT'], params: IdParams(PathId) }, async ({ caller, params }) => {
  return { status: 200, body: cooperativeView(await getCooperative(registryRepo(), caller, params.id ?? '')) };
});
