import type { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The X-Ray tracer of every function (Powertools Tracer; the functions run with active tracing,
 * infra/stack/service-function.ts), loaded only where tracing is enabled (docs/powertools.md#tracing-loads-only-when-enabled).
 *
 * Why not one `new Tracer()` at import as before: `@aws-lambda-powertools/tracer` imports the X-Ray
 * SDK, and the X-Ray SDK creates its `cls-hooked` namespace on import, which enables an async_hooks
 * hook with a destroy callback on every promise of the process, whether the Tracer is enabled or
 * not. Outside Lambda (`npm start`, where every function shares one process, and the tests) or with
 * `POWERTOOLS_TRACE_ENABLED=false` that is pure cost, so the Tracer (and with it the X-Ray SDK) is
 * imported only where tracing is enabled. There it is imported
 * when this module loads (the Lambda init phase, as before), and {@link loadTracer} is what the
 * handler middleware (./instrument.ts) awaits before each invocation.
 */

/**
 * Whether Powertools would enable the Tracer in this environment, by the rules the Tracer applies
 * itself (2.x `setTracingEnabled`): off when `POWERTOOLS_TRACE_ENABLED` is `false` (any case),
 * outside the Lambda execution environment (no `AWS_EXECUTION_ENV`), under the SAM CLI
 * (`AWS_SAM_LOCAL` set) and under Amplify's mock (`AWS_EXECUTION_ENV=AWS_Lambda_amplify-mock`).
 */
export function tracingEnabled(): boolean {
  if ((process.env.POWERTOOLS_TRACE_ENABLED ?? '').toLowerCase() === 'false') return false;
  const executionEnv = process.env.AWS_EXECUTION_ENV ?? '';
  return executionEnv !== '' && executionEnv !== 'AWS_Lambda_amplify-mock' && !process.env.AWS_SAM_LOCAL;
}

let loaded: Tracer | undefined;
let loading: Promise<Tracer | undefined> | undefined;

/**
 * The Powertools Tracer, imported (with the X-Ray SDK) and built once, only when
 * {@link tracingEnabled}; resolves to undefined otherwise, without importing anything. The
 * `## <handler>` subsegment with the cold-start and service annotations is opened by the handler
 * middleware (./instrument.ts); `fetch` calls to outside systems (payout provider, ledger RPC,
 * registry, pinning) are captured by the Tracer itself. Rejects when the import fails.
 */
export function loadTracer(): Promise<Tracer | undefined> {
  loading ??= tracingEnabled()
    ? import('@aws-lambda-powertools/tracer').then(({ Tracer: PowertoolsTracer }) => {
        loaded = new PowertoolsTracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace' });
        return loaded;
      })
    : Promise.resolve(undefined);
  return loading;
}

/**
 * Returns the AWS SDK v3 client with its calls traced as X-Ray subsegments; unchanged (and nothing
 * imported) when tracing is off. A client built before the Tracer finished loading is captured when
 * it has: the capture adds a middleware to the client's own stack, and every invocation waits for
 * the load before its handler runs, so no call of an invocation goes out untraced.
 */
export function traced<T>(client: T): T {
  if (!tracingEnabled()) return client;
  if (loaded) return loaded.captureAWSv3Client(client);
  loadTracer().then(
    (tracer) => tracer?.captureAWSv3Client(client),
    () => undefined, // the invocation's own wait for the load reports the failure
  );
  return client;
}

// Where tracing is on, import the Tracer during the function's init, as a static import did.
if (tracingEnabled()) loadTracer().catch(() => undefined);
