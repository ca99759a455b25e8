import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { EndpointIdParam, endpointWithSecretView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler } from '../../shared/http/handler';
import { IdParams } from '../../shared/http/path-params';
import { rotateSecret } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/endpoints/{id}/rotate-secret: 200 with the new secret (shown only here); the old one signs 24 h more. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'MFI'], params: IdParams(EndpointIdParam) },
  async ({ caller, params }) => {
    return { status: 200, body: endpointWithSecretView(await rotateSecret(endpointDeps(), caller, params.id!)) };
  },
);
