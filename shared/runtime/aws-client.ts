import { NoOpLogger } from '@smithy/core/client';
import { traced } from './tracer';

/** The parts of an AWS SDK v3 client this module touches. */
interface SdkClient {
  config: { logger?: unknown };
  middlewareStack: { remove(toRemove: string): boolean };
}

/** The name of the SDK's logging middleware (`@aws-sdk/core` `loggerMiddlewareOptions`). */
const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/**
 * Prepares an AWS SDK v3 client the way every adapter uses it (docs/powertools.md#aws-sdk-clients):
 * - when the client has no logger of its own (the SDK's default `NoOpLogger`, which discards every
 *   line), the SDK's logging middleware is removed: after every call it still copies the input and
 *   the output through their sensitive-field filters (walking each item read or written) only to
 *   hand the copies to the no-op logger. A client given a `logger` keeps the middleware.
 * - its calls are traced as X-Ray subsegments where tracing is enabled (./tracer.ts {@link traced}).
 * Returns the same client.
 */
export function awsClient<T extends SdkClient>(client: T): T {
  if (client.config.logger instanceof NoOpLogger) client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  return traced(client);
}
