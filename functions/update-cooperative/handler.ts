import { now, registryRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PathId } from '../../shared/http/path-params';
import { UpdateCooperativeSchema } from '../../shared/http/registry-schemas';
import { cooperativeView } from '../../shared/http/views';
import { updateCooperative } from '../../shared/use-cases/registry';

/** PATCH /cooperatives/{id} (ADMIN): licence, manager or prices (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
export const handler = httpHandler(
  { roles: ['ADMIN'], params: IdParams(PathId), body: UpdateCooperativeSchema },
  async ({ body, params }) => {
    const coop = await updateCooperative(registryRepo(), params.id ?? '', body, now());
    return { status: 200, body: cooperativeView(coop) };
  },
);
