import { registryRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PathId } from '../../shared/http/path-params';
import { farmerView } from '../../shared/http/views';
import { getFarmer } from '../../shared/use-cases/registry';

/** GET /farmers/{id}: ADMIN, MFI, or a COOPERATIVE/AGENT token of the farmer's cooperative. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'AGENT', 'MFI'], params: IdParams(PathId) },
  async ({ caller, params }) => {
    return { status: 200, body: farmerView(await getFarmer(registryRepo(), caller, params.id ?? '')) };
  },
);
