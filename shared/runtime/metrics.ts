import { appendFileSync } from 'node:fs';
import { Metrics, type MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Business metrics in CloudWatch Embedded Metric Format (EMF), built with Powertools Metrics: each
 * flush writes one JSON line per dimension set, which CloudWatch Logs turns into metrics (no API
 * call). In Lambda the lines go to stdout, the function's log group; locally (`npm start`) the
 * stack sets `METRICS_FILE` and they are appended to `$LOCAL_DATA_DIR/metrics.ndjson`, one EMF
 * line each, for an operator to read (`tail -f`, `jq`). In AWS Powertools comes from its official
 * layer, not the bundle (infra/bundling.ts).
 *
 * Use cases count through {@link metrics} (the `MetricsRecorder` port-like interface, with no
 * AWS type in it); every entry point flushes once per invocation through Powertools' `logMetrics`
 * middleware (./instrument.ts `observability`, which `httpHandler` in shared/http/handler.ts and
 * `sqsConsumer` in ./sqs-consumer.ts use too), given {@link metricsPublisher}.
 */
/** The metrics of the service, with their units (docs/operations.md#metrics lists them). */
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
  /** A ledger write parked after failing every allowed attempt (log key alarm = LEDGER_WRITE_PARKED; `npm run ledger-parked`). */
  LedgerWritesParked: 'Count',
  /** Age of the oldest ledger write still open (not confirmed, failed nor parked), in seconds; one value per ledger-write reconciler run (0 when none). */
  LedgerOldestPendingAge: 'Seconds',
  /** A chain event the scheduled chain watcher parked after it failed in every allowed run (its cursor moved on; log key alarm = CHAIN_EVENT_PARKED). */
  ChainEventsParked: 'Count',
  /** A payout provider's merchant balance in USD (UGX converted), one value per balance monitor run; dimension `provider`, and without it (Minimum = the lowest provider's) for the low-balance alarm. */
  PayoutMerchantBalanceUsd: 'None',
  /** A DDS filing step; dimension `outcome`: FILED, AVAILABLE, REJECTED. */
  DdsFilings: 'Count',
  /** An evidence pin attempt by the background pinner; dimension `outcome`: PINNED, FAILED (retried), ROOT_MISMATCH (not retried), PRIVATE_SKIPPED (a DDS job from before statements became private, closed unpinned). */
  EvidencePins: 'Count',
  /** An outbound webhook delivery attempt failed; dimension `reason`. */
  OutboundDeliveryFailures: 'Count',
} as const;

export type MetricName = keyof typeof METRICS;

/** Why an inbound webhook was rejected or not applied (dimension `reason` of WebhookRejections). */
export type WebhookRejectionReason =
  | 'INVALID_SIGNATURE'
  | 'INVALID_BODY'
  | 'MISMATCH'
  | 'TOKEN_MISMATCH'
  | 'UNKNOWN_REFERENCE'
  | 'UNKNOWN_BATCH'
  | 'UNKNOWN_PURCHASE_ORDER';

/** The outcomes of an inbound webhook's use case that count as rejections (the others applied, or were duplicates). */
export const WEBHOOK_REJECTION_OUTCOMES: readonly WebhookRejectionReason[] = [
  'MISMATCH',
  'TOKEN_MISMATCH',
  'UNKNOWN_REFERENCE',
  'UNKNOWN_BATCH',
  'UNKNOWN_PURCHASE_ORDER',
];

/** Default namespace (the dev stack's name); the stack sets POWERTOOLS_METRICS_NAMESPACE to its own name. */
const DEFAULT_METRICS_NAMESPACE = 'CoffeeTrace';

/** The one dimension every metric carries (`service`), so dashboards and alarms address them without knowing the function. */
export const SERVICE_DIMENSION = 'service';

/** What use cases count with: a count or a duration, with optional dimensions (low-cardinality values only: reasons, outcomes, never ids). */
export interface MetricsRecorder {
  /** Adds `value` (default 1) to a Count metric. */
  count(name: MetricName, dimensions?: Record<string, string>, value?: number): void;
  /** Records one duration in ms (negative durations are recorded as 0). */
  timing(name: MetricName, ms: number, dimensions?: Record<string, string>): void;
}

interface Pending {
  name: MetricName;
  value: number;
  dimensions: Record<string, string>;
}

let pending: Pending[] = [];
/** Where flushed lines go; replaceable in tests. Default: {@link defaultSink}. */
let sink: ((line: string) => void) | undefined;

/** The recorder every use case shares; values are buffered until {@link flushMetrics}. */
export const metrics: MetricsRecorder = {
  count: (name, dimensions = {}, value = 1) => void pending.push({ name, value, dimensions }),
  timing: (name, ms, dimensions = {}) => void pending.push({ name, value: Math.max(0, Math.round(ms)), dimensions }),
};

/**
 * Writes the buffered metrics as EMF lines and empties the buffer: one Powertools `Metrics`
 * document per distinct dimension set (several values of a metric become an EMF value array),
 * namespace `POWERTOOLS_METRICS_NAMESPACE`, default dimension `service`. A set with `reason` and
 * another dimension also carries the set `[service, reason]`, so an alarm can sum a reason over
 * every webhook. Powertools builds and validates each document (`serializeMetrics`); this function
 * chooses where it goes (stdout in Lambda, METRICS_FILE locally), because Powertools' own publish
 * writes only to stdout. Never throws: metrics must not fail a request. Returns the lines written.
 */
export function flushMetrics(now: Date = new Date()): string[] {
  if (pending.length === 0) return [];
  const batch = pending;
  pending = [];
  const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace';
  const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE;
  const groups = new Map<string, { dims: Record<string, string>; values: Pending[] }>();
  for (const p of batch) {
    const key = JSON.stringify(Object.entries(p.dimensions).sort());
    const g = groups.get(key) ?? { dims: p.dimensions, values: [] };
    groups.set(key, g);
    g.values.push(p);
  }
  const lines: string[] = [];
  try {
    for (const { dims, values } of groups.values()) {
      const doc = new Metrics({ namespace, serviceName, logger: SILENT });
      for (const [name, value] of Object.entries(dims)) doc.addDimension(name, value);
      if ('reason' in dims && Object.keys(dims).length > 1) doc.addDimensions({ reason: dims.reason! });
      for (const p of values) doc.addMetric(p.name, METRICS[p.name] as MetricUnitValue, p.value);
      const emf = doc.serializeMetrics() as { _aws: { Timestamp: number } };
      emf._aws.Timestamp = now.getTime();
      lines.push(JSON.stringify(emf));
    }
    const write = sink ?? defaultSink();
    for (const line of lines) write(line);
  } catch {
    // a full disk or closed stdout must not fail the invocation; the values are lost
  }
  return lines;
}

/** Powertools' warnings (e.g. about empty flushes) are not wanted: this module never publishes empty documents. */
const SILENT = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

type MetricUnitValue = (typeof MetricUnit)[keyof typeof MetricUnit];

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

/**
 * What Powertools' `logMetrics` middleware flushes at the end of every invocation: a Powertools
 * `Metrics` whose `publishStoredMetrics` is {@link flushMetrics}. Why our own flush and not one
 * `Metrics` instance that use cases write to directly: (1) one invocation records values with
 * different dimension values (e.g. `DdsFilings` FILED and REJECTED, `WebhookRejections` by
 * `reason`), and one Powertools `Metrics` document carries a single set of dimension values, so
 * each distinct set needs its own document (measured with 2.35.0: `outcome` FILED then REJECTED
 * on one instance gives one document with `outcome: REJECTED` and `DdsFilings: [1, 1]`, the FILED
 * filing counted as rejected); (2) the local stack appends the lines to METRICS_FILE, while
 * Powertools publishes to stdout only; (3) use cases count through {@link MetricsRecorder}, with no
 * Powertools type in them.
 */
class FlushingMetrics extends Metrics {
  /** Writes the invocation's buffered values ({@link flushMetrics}); never throws. */
  public override publishStoredMetrics(): this {
    flushMetrics();
    return this;
  }
}

/** The `Metrics` the `logMetrics` middleware flushes (shared/runtime/instrument.ts). */
export const metricsPublisher: Metrics = new FlushingMetrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'coffee-trace',
  logger: SILENT,
});

/**
 * Counts a failed outbound webhook delivery attempt (`reason`: e.g. `HTTP_500`, `TIMEOUT`,
 * `GONE`, `BLOCKED_ADDRESS`; keep it low-cardinality, never a URL).
 */
export function countOutboundDeliveryFailure(reason: string): void {
  metrics.count('OutboundDeliveryFailures', { reason });
}
