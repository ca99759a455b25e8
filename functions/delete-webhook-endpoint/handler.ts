import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { EndpointIdParam } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler } from '../../shared/http/handler';
import { IdParams } from '../../shared/http/path-params';
import { deleteEndpoint } from '../../shared/use-cases/outbound-webhooks';

/** DELETE /webhooks/endpoints/{id}: 200 `{endpoint_id, deleted: true}`; deliveries still pending end DEAD. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'MFI'], params: IdParams(EndpointIdParam) },
  async ({ caller, params }) => {
    await deleteEndpoint(endpointDeps(), caller, params.id!);
    return { status: 200, body: { endpoint_id: params.id, deleted: true } };
  },
);
