import { ddsAmendDeps } from '../../shared/composition/eudr';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { amendDdsRoute } from '../../shared/http/routes/eudr';
import { ddsView } from '../../shared/http/views';
import { amendDds } from '../../shared/use-cases/eudr-amend';

/**
 * POST /eudr/dds/{id}/amend (docs/api/eudr.md#amend-and-withdraw): the statement rebuilt from the
 * current records and sent with the EU Information System's amendDds; 200 with it, SUBMITTED again.
 */
export const handler = httpHandler(routeOptions(amendDdsRoute), async ({ caller, params }) => {
  const dds = await amendDds(await ddsAmendDeps(), caller, params.id ?? '');
  return { status: 200, body: ddsView(dds) };
});
