import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Context } from 'aws-lambda';
import { logger } from './logger';
import { metricsPublisher } from './metrics';
import { loadTracer, tracingEnabled } from './tracer';

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
 * Where tracing is off (outside Lambda, `POWERTOOLS_TRACE_ENABLED=false`: ./tracer.ts
 * `tracingEnabled`) the tracer middleware is left out and the X-Ray SDK is never imported.
 */
export function observability(): MiddlewareObj[] {
  return [
    ...(tracingEnabled() ? [handlerSubsegment()] : []),
    logMetrics(metricsPublisher),
    injectLambdaContext(logger, { resetKeys: true }),
  ];
}

/**
 * Powertools' `captureLambdaHandler` on the Tracer that ./tracer.ts loads: each invocation first
 * waits for that load (at once after the first), then opens the subsegment as the Powertools
 * middleware does; `after` and `onError` close it. A failed load fails the invocation.
 */
function handlerSubsegment(): MiddlewareObj {
  let capture: MiddlewareObj | undefined;
  return {
    before: async (request) => {
      const tracer = await loadTracer();
      if (!tracer) return;
      capture ??= captureLambdaHandler(tracer, { captureResponse: false });
      await capture.before?.(request);
    },
    after: async (request) => {
      await capture?.after?.(request);
    },
    onError: async (request) => {
      await capture?.onError?.(request);
    },
  };
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
