import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { CreateOutboundEndpointSchema, endpointWithSecretView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler } from '../../shared/http/handler';
import { registerEndpoint } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/endpoints (ADMIN; COOPERATIVE with MANAGER; MFI): 201 with the secret, shown only here. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'MFI'], body: CreateOutboundEndpointSchema },
  async ({ body, caller }) => {
    const endpoint = await registerEndpoint(endpointDeps(), caller, body);
    return { status: 201, body: endpointWithSecretView(endpoint), headers: { location: `/webhooks/endpoints/${endpoint.endpoint_id}` } };
  },
);
