import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { DEFAULT_MEMORY_MIB, functionManifest, ROUTE_TIMEOUT_SECONDS } from '../../shared/manifest';

/** Each function's timeout and memory, as the stack gives them in AWS (shared/manifest.ts). */
const MANIFEST = new Map(functionManifest().map((f) => [f.fn, f]));

/** API Gateway's integration timeout: no HTTP route may run longer than this, whatever its own timeout. */
export const GATEWAY_TIMEOUT_MS = 29_000;

/**
 * The Lambda context a function receives from the local stack, as complete as the runtime's in
 * AWS: name, version, ARN (account 000000000000, region `local`), memory and log group from the
 * manifest, a fresh request id (or `awsRequestId`), and `getRemainingTimeInMillis` counting down
 * from now to the function's timeout (or `timeoutMs`). The Powertools middlewares read it
 * (shared/runtime/instrument.ts): Logger puts the request id, function name, ARN and memory on
 * every line. A function the manifest does not know (a test's stand-in) gets a route's defaults
 * (ROUTE_TIMEOUT_SECONDS, DEFAULT_MEMORY_MIB).
 */
export function localLambdaContext(fn: string, opts: { awsRequestId?: string; timeoutMs?: number } = {}): Context {
  const entry = MANIFEST.get(fn) ?? { timeoutSeconds: ROUTE_TIMEOUT_SECONDS, memoryMiB: DEFAULT_MEMORY_MIB };
  const deadline = Date.now() + (opts.timeoutMs ?? entry.timeoutSeconds * 1000);
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: fn,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${fn}`,
    memoryLimitInMB: String(entry.memoryMiB),
    awsRequestId: opts.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${fn}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
