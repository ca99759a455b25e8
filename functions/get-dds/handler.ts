import { ddsRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, DdsIdParam } from '../../shared/http/path-params';
import { ddsView } from '../../shared/http/views';
import { readDds } from '../../shared/use-cases/eudr';

/** GET /eudr/dds/{id}: the statement with its filing state (docs/api/eudr.md#due-diligence-statements). */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE'], params: IdParams(DdsIdParam) }, async ({ caller, params }) => ({
  status: 200,
  body: ddsView(await readDds(ddsRepo(), caller, params.id ?? '')),
}));
