import { ddsAmendDeps } from '../../shared/composition/eudr';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { withdrawDdsRoute } from '../../shared/http/routes/eudr';
import { ddsView } from '../../shared/http/views';
import { withdrawDds } from '../../shared/use-cases/eudr-amend';

/** POST /eudr/dds/{id}/withdraw (docs/api/eudr.md#amend-and-withdraw): the EU Information System's withdrawDds; 200 with the statement, WITHDRAWN. */
export const handler = httpHandler(routeOptions(withdrawDdsRoute), async ({ caller, params }) => {
  const dds = await withdrawDds(await ddsAmendDeps(), caller, params.id ?? '');
  return { status: 200, body: ddsView(dds) };
});
