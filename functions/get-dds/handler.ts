import { ddsRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getDdsRoute } from '../../shared/http/routes/eudr';
import { ddsView } from '../../shared/http/views';
import { readDds } from '../../shared/use-cases/eudr';

/** GET /eudr/dds/{id}: the statement with its filing state (docs/api/eudr.md#due-diligence-statements). */
export const handler = httpHandler(routeOptions(getDdsRoute), async ({ caller, params }) => ({
  status: 200,
  body: ddsView(await readDds(ddsRepo(), caller, params.id ?? '')),
}));
