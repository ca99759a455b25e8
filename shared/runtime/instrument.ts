import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Context } from 'aws-lambda';
import { logger } from './logger';
import { metricsPublisher } from './metrics';
import { tracer } from './tracer';

/**
 * The Powertools middlewares every Lambda entry point runs with (docs/powertools.md), outermost
 * first:
 * - Tracer `captureLambdaHandler`: the X-Ray subsegment `## <handler>` annotated with `ColdStart`
 *   and `Service`; an error is added to it as metadata. Responses are not captured
 *   (`captureResponse: false`): they hold phone numbers and amounts.
 * - Metrics `logMetrics`: the invocation's business metrics flushed once when it ends, answered or
 *   failed (./metrics.ts {@link metricsPublisher}).
 * - Logger `injectLambdaContext` with `resetKeys`: every log line carries the Lambda request id
 *   (`function_request_id`), `cold_start`, the function's name, ARN and memory; keys a handler
 *   appends for one invocation (`logger.appendKeys`) are removed when it ends, success or throw,
 *   so none leaks into the next invocation.
 * Outside Lambda the tracer is disabled and its middleware does nothing.
 */
export function observability(): MiddlewareObj[] {
  return [
    captureLambdaHandler(tracer, { captureResponse: false }),
    logMetrics(metricsPublisher),
    injectLambdaContext(logger, { resetKeys: true }),
  ];
}

/**
 * Wraps a Lambda entry point that is not an HTTP route (queue or stream consumer, state-machine
 * task, scheduled worker, authorizer) in a middy handler with {@link observability}; HTTP routes
 * get the same middlewares inside their own middy stack (shared/http/handler.ts). `context` is the
 * Lambda context (in AWS the runtime's; locally infra/local/lambda-context.ts); without one (unit
 * tests) middy passes `{}` and the log lines simply lack the Lambda fields. An error the handler
 * throws is rethrown after the middlewares ran. No early timeout: the handler runs until the
 * Lambda timeout ends it.
 */
export function instrumented<E = undefined, R = unknown>(
  handler: (event: E, context: Context) => Promise<R>,
): (event?: E, context?: Context) => Promise<R> {
  // No early timeout (middy's default answers 5 ms before the deadline): a worker runs until its
  // Lambda timeout ends it, as it did before these middlewares.
  const wrapped = middy<E, R, Error, Context>(handler, { timeoutEarlyInMillis: 0 }).use(observability());
  return (event, context) => wrapped(event as E, context as Context);
}
