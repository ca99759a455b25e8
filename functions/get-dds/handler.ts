import { ddsReadDeps } from '../../shared/composition/eudr';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getDdsRoute } from '../../shared/http/routes/eudr';
import { ddsView } from '../../shared/http/views';
import { readDdsWithDocuments } from '../../shared/use-cases/eudr';

/** GET /eudr/dds/{id}: the statement with its filing state, its producers read from the private document store (docs/api/eudr.md#due-diligence-statements). */
export const handler = httpHandler(routeOptions(getDdsRoute), async ({ caller, params }) => ({
  status: 200,
  body: ddsView(await readDdsWithDocuments(ddsReadDeps(), caller, params.id ?? '')),
}));
