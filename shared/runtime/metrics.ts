import { appendFileSync } from 'node:fs';

/**
 * Business metrics in CloudWatch Embedded Metric Format (EMF): each flush writes one JSON line per
 * dimension set, which CloudWatch Logs turns into metrics (no API call, no SDK). In Lambda the
 * lines go to stdout, the function's log group; locally (`npm start`) the stack sets
 * `METRICS_FILE` and they are appended to `$LOCAL_DATA_DIR/metrics.ndjson`, one EMF line each,
 * for an operator to read (`tail -f`, `jq`).
 *
 * Why not Powertools Metrics: it adds 10.5 KB to every bundle on top of the logger, more than the
 * headroom of create-farmer-payout, payout-provider-webhook and chain-events-webhook (≈6 KB each
 * under their budgets); this module writes the same EMF documents in about 1 KB.
 *
 * Use cases count through {@link metrics} (the `MetricsRecorder` port-like interface, with no
 * AWS type in it); every entry point flushes once per invocation: `httpHandler` (shared/http/
 * handler.ts), `sqsConsumer` (./sqs-consumer.ts) and {@link withMetrics} for state-machine tasks
 * and scheduled workers.
 */

/** The metrics of the service, with their units (the README "Operating" section lists them). */
export const METRICS = {
  /** A payout (or loan disbursement) was created (PENDING, first order to follow). */
  PayoutsCreated: 'Count',
  /** A payout reached COMPLETED (its settlement recorded). */
  PayoutsCompleted: 'Count',
  /** A payout attempt failed at the provider (the payout retries, or goes to manual review after four). */
  PayoutsFailed: 'Count',
  /** From a payout's creation to its COMPLETED record, in ms. */
  PayoutTimeToCompleted: 'Milliseconds',
  /** A payout moved to MANUAL_REVIEW (all attempts exhausted). */
  ManualReviews: 'Count',
  /** An inbound webhook refused or not confirmed; dimensions `webhook` and `reason`. */
  WebhookRejections: 'Count',
  /** A ledger write that did not land in one go (not mined yet, ledger down): the queue retries it. */
  LedgerWriteRetries: 'Count',
  /** From a ledger write's commit (stored with its cause) to its mined confirmation, in ms. */
  LedgerWriteLag: 'Milliseconds',
  /** A DDS filing step; dimension `outcome`: FILED, AVAILABLE, REJECTED. */
  DdsFilings: 'Count',
  /** An outbound webhook delivery attempt failed; dimension `reason`. */
  OutboundDeliveryFailures: 'Count',
} as const;

export type MetricName = keyof typeof METRICS;
export type MetricUnit = (typeof METRICS)[MetricName];

/** Why an inbound webhook was rejected or not applied (dimension `reason` of WebhookRejections). */
export type WebhookRejectionReason = 'INVALID_SIGNATURE' | 'INVALID_BODY' | 'MISMATCH' | 'TOKEN_MISMATCH' | 'UNKNOWN_REFERENCE' | 'UNKNOWN_BATCH' | 'UNKNOWN_PURCHASE_ORDER';

/** The outcomes of an inbound webhook's use case that count as rejections (the others applied, or were duplicates). */
export const WEBHOOK_REJECTION_OUTCOMES: readonly WebhookRejectionReason[] = ['MISMATCH', 'TOKEN_MISMATCH', 'UNKNOWN_REFERENCE', 'UNKNOWN_BATCH', 'UNKNOWN_PURCHASE_ORDER'];

/** Default namespace (the dev stack's name); the stack sets POWERTOOLS_METRICS_NAMESPACE to its own name. */
export const DEFAULT_METRICS_NAMESPACE = 'CoffeeTrace';

/** The one dimension every metric carries (`service`), so dashboards and alarms address them without knowing the function. */
export const SERVICE_DIMENSION = 'service';

/** What use cases count with: a count or a duration, with optional dimensions (low-cardinality values only: reasons, outcomes, never ids). */
export interface MetricsRecorder {
  /** Adds `value` (default 1) to a Count metric. */
  count(name: MetricName, dimensions?: Record<string, string>, value?: number): void;
  /** Records one duration in ms (negative durations are recorded as 0). */
  timing(name: MetricName, ms: number, dimensions?: Record<string, string>): void;
}

interface Pending { name: MetricName; value: number; dimensions: Record<string, string> }

let pending: Pending[] = [];
/** Where flushed lines go; replaceable in tests. Default: {@link defaultSink}. */
let sink: ((line: string) => void) | undefined;

/** The recorder every use case shares; values are buffered until {@link flushMetrics}. */
export const metrics: MetricsRecorder = {
  count: (name, dimensions = {}, value = 1) => void pending.push({ name, value, dimensions }),
  timing: (name, ms, dimensions = {}) => void pending.push({ name, value: Math.max(0, Math.round(ms)), dimensions }),
};

/**
 * Writes the buffered metrics as EMF lines (one per distinct dimension set; several values of a
 * metric become an EMF value array) and empties the buffer. Never throws: metrics must not fail a
 * request. Returns the lines written.
 */
export function flushMetrics(now: Date = new Date()): string[] {
  if (pending.length === 0) return [];
  const batch = pending;
  pending = [];
  const service = process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace';
  const groups = new Map<string, { dims: Record<string, string>; values: Map<MetricName, number[]> }>();
  for (const p of batch) {
    const dims = { [SERVICE_DIMENSION]: service, ...p.dimensions };
    const key = JSON.stringify(Object.entries(dims).sort());
    const g = groups.get(key) ?? { dims, values: new Map() };
    groups.set(key, g);
    g.values.set(p.name, [...(g.values.get(p.name) ?? []), p.value]);
  }
  const lines: string[] = [];
  for (const { dims, values } of groups.values()) {
    const doc: Record<string, unknown> = {
      _aws: {
        Timestamp: now.getTime(),
        CloudWatchMetrics: [{
          Namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE,
          // The full set, plus `service` with `reason` alone when there is one, so an alarm can sum a reason over every webhook.
          Dimensions: [Object.keys(dims), ...('reason' in dims && Object.keys(dims).length > 2 ? [[SERVICE_DIMENSION, 'reason']] : [])],
          Metrics: [...values.keys()].map((name) => ({ Name: name, Unit: METRICS[name] })),
        }],
      },
      ...dims,
    };
    for (const [name, vals] of values) doc[name] = vals.length === 1 ? vals[0] : vals;
    lines.push(JSON.stringify(doc));
  }
  try {
    const write = sink ?? defaultSink();
    for (const line of lines) write(line);
  } catch {
    // a full disk or closed stdout must not fail the invocation; the values are lost
  }
  return lines;
}

/** METRICS_FILE when set (the local stack); else stdout in Lambda; elsewhere (unit tests, CLI tools) nowhere. */
function defaultSink(): (line: string) => void {
  const file = process.env.METRICS_FILE;
  if (file) return (line) => appendFileSync(file, `${line}\n`);
  return process.env.AWS_LAMBDA_FUNCTION_NAME ? (line) => void process.stdout.write(`${line}\n`) : () => undefined;
}

/** Replaces where EMF lines are written (tests); `undefined` restores the default. Also drops unflushed values. */
export function setMetricsSink(write: ((line: string) => void) | undefined): void {
  sink = write;
  pending = [];
}

/** Wraps a Lambda handler (state-machine task, scheduled worker) so its metrics are flushed when it ends, success or error. */
export function withMetrics<E, R>(handler: (event: E) => Promise<R>): (event: E) => Promise<R> {
  return async (event) => {
    try {
      return await handler(event);
    } finally {
      flushMetrics();
    }
  };
}

/**
 * Counts a failed outbound webhook delivery attempt (`reason`: e.g. `HTTP_500`, `TIMEOUT`,
 * `GONE`, `BLOCKED_ADDRESS`; keep it low-cardinality, never a URL).
 */
export function countOutboundDeliveryFailure(reason: string): void {
  metrics.count('OutboundDeliveryFailures', { reason });
}
