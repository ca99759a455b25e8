import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { callerToContext } from '../../shared/auth/claims';
import { verifyBearerToken } from '../../shared/auth/verify-token';
import { instrumented } from '../../shared/runtime/instrument';
import { logger } from '../../shared/runtime/logger';

/**
 * The shared Lambda REQUEST authorizer (docs/security.md#tokens-and-roles). Verifies the Bearer JWT with jose and hands
 * `role`, `cooperative_id`, `duties`, `mfi_id`, `sub` to the handler as authorizer context.
 * A bad token throws "Unauthorized", which API Gateway (and the local gateway) answer with 401
 * `UNAUTHORIZED` in the error envelope.
 */
export const handler = instrumented(async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const headers = event.headers ?? {};
  const authorization = headers.Authorization ?? headers.authorization;
  try {
    const caller = await verifyBearerToken(authorization);
    // Allow the whole API for this token: the authorizer decides who you are, handlers decide what you may do.
    const arn = `${event.methodArn.split('/').slice(0, 2).join('/')}/*`;
    return {
      principalId: caller.sub,
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: arn }] },
      context: callerToContext(caller),
    };
  } catch (err) {
    logger.info('token rejected', { reason: (err as Error).message });
    throw new Error('Unauthorized');
  }
});
