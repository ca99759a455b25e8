import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The X-Ray tracer of every function (Powertools Tracer; the functions run with active tracing,
 * infra/stack/service-function.ts). {@link instrumented} (./instrument.ts) opens the `## handler`
 * subsegment with the cold-start and service annotations; the AWS SDK clients are captured where
 * they are built ({@link traced}), and `fetch` calls to outside systems (payout provider, ledger
 * RPC, registry, pinning) are captured by the Tracer itself. Outside Lambda (`npm start`, tests)
 * the Tracer is disabled and every call here is a no-op.
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace' });

/** Returns the AWS SDK v3 client with its calls traced as X-Ray subsegments (unchanged when tracing is off). */
export function traced<T>(client: T): T {
  return tracer.captureAWSv3Client(client);
}
