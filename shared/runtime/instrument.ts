import { flushMetrics } from './metrics';
import { tracer } from './tracer';

/**
 * Wraps a Lambda entry point (HTTP handler, queue or stream consumer, state-machine task, scheduled
 * worker, authorizer) with the service's observability, so every function has the same:
 * - an X-Ray subsegment `## <handler>` for the invocation (Powertools Tracer, manual
 *   instrumentation as its documentation gives it), annotated with `ColdStart` and `Service`; an
 *   error that escapes is added to it as metadata and rethrown;
 * - the invocation's metrics flushed once when it ends, success or error (./metrics.ts).
 * Outside Lambda the tracer is disabled and only the metrics flush remains.
 */
export function instrumented<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const parent = tracer.isTracingEnabled() ? tracer.getSegment() : undefined;
    let sub: ReturnType<NonNullable<typeof parent>['addNewSubsegment']> | undefined;
    if (parent) {
      sub = parent.addNewSubsegment(`## ${process.env._HANDLER ?? 'handler'}`);
      tracer.setSegment(sub);
      tracer.annotateColdStart();
      tracer.addServiceNameAnnotation();
    }
    try {
      return await handler(...args);
    } catch (err) {
      if (sub) tracer.addErrorAsMetadata(err as Error);
      throw err;
    } finally {
      flushMetrics();
      if (sub && parent) {
        sub.close();
        tracer.setSegment(parent);
      }
    }
  };
}
