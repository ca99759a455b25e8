/**
 * What an operator sees (issue 11, docs/operations.md#operating): a CloudWatch dashboard of the business
 * metrics (EMF, shared/runtime/metrics.ts, namespace = the stack's name) beside the API, state
 * machine and queues; and, in stages with `alarmsEnabled` (infra/stack/stage.ts: prod), alarms to
 * an ops SNS topic (context `opsAlarmEmail` subscribes an address):
 * - every dead-letter queue of the stack not empty;
 * - payout time to COMPLETED p95 over 60 s;
 * - manual reviews: {@link MANUAL_REVIEW_ALARM_THRESHOLD} or more in an hour;
 * - API 5xx rate over 1 % (two 5-minute periods out of three);
 * - payout state machine executions failed, timed out or aborted;
 * - ledger writer lag (commit → mined) over 5 minutes, and the ledger-write queue's oldest
 *   message older than 10 minutes (a stuck writer confirms nothing, so it has no lag to report);
 * - the oldest open ledger write older than {@link LEDGER_OLDEST_PENDING_ALARM_SECONDS} (LedgerOldestPendingAge,
 *   reported by the ledger-write reconciler each run), and any ledger write or chain event parked
 *   (a log metric filter on the `alarm` log keys LEDGER_WRITE_PARKED and CHAIN_EVENT_PARKED in the
 *   ledger writer's and chain watcher's log groups; `npm run ledger-parked -- list`);
 * - a payout provider's merchant balance below the setting `payoutBalanceAlarmUsd`
 *   (PayoutMerchantBalanceUsd, Minimum over the providers, reported by the balance monitor every 5 minutes);
 * - forged or mismatched events: a log metric filter on the use cases' `alarm` log keys
 *   (FORGED_OR_MISMATCHED_CHAIN_EVENT, FORGED_OR_UNEXPECTED_BUYER_PAYMENT, FORGED_OR_MISMATCHED_WEBHOOK,
 *   FORGED_OR_MISMATCHED_ONRAMP_WEBHOOK) in the log groups of the webhook functions and the ledger writer.
 *
 * Where: the dashboard is in the main stack; the log metric filters, the ops topic, its KMS key and
 * the alarms are in the nested stack `Observability/Alarms` ({@link Observability.nested}), which
 * takes the log groups, queue names and the state machine ARN as parameters. The names an
 * operator knows stay the same: alarms `<stack name>-<alarm>`, dashboard `<stack name>-operations`
 * (the main stack's name, not the nested stack's).
 *
 * Tracing: X-Ray active tracing is on for every function (infra/stack/service-function.ts), the
 * API stage (http-api.ts) and the state machine (payout-state-machine.ts). The Powertools Tracer
 * SDK (aws-xray-sdk-core, +120 KB per bundle) is not bundled: it does not fit the bundle budgets.
 */
import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Subscription, SubscriptionProtocol, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { routes } from '../../shared/manifest';
import { SERVICE_DIMENSION, type MetricName } from '../../shared/runtime/metrics';
import { CHAIN_EVENT_ALARM } from '../../shared/use-cases/chain-events';
import { CHAIN_EVENT_PARKED_ALARM } from '../../shared/use-cases/chain-watch';
import { LEDGER_WRITE_PARKED_ALARM } from '../../shared/use-cases/ledger-writer';
import { ONRAMP_MISMATCH_ALARM } from '../../shared/use-cases/deposits';
import { MISMATCH_ALARM } from '../../shared/use-cases/payout-webhook';
import { BUYER_PAYMENT_ALARM } from '../../shared/use-cases/settlement';
import type { ServiceFunction } from './service-function';

/** The `alarm` values the use cases log for a forged or mismatched event (one source: the use cases). */
export const FORGED_EVENT_ALARM_KEYS = [CHAIN_EVENT_ALARM, BUYER_PAYMENT_ALARM, MISMATCH_ALARM, ONRAMP_MISMATCH_ALARM] as const;
/** Metric of the forged-event log metric filter (same namespace as the business metrics). */
export const FORGED_EVENT_METRIC = 'ForgedEventAlarms';
/** Payout time to COMPLETED: alarm when the p95 over 15 minutes exceeds this (ms). */
export const TIME_TO_COMPLETED_P95_MS = 60_000;
/**
 * Manual reviews in one hour that raise the alarm. One manual review is business as usual (the
 * cooperative manager is notified and resolves it); three in an hour point at the provider or the
 * farmers' phone data, which an operator should look at.
 */
export const MANUAL_REVIEW_ALARM_THRESHOLD = 3;
/** API 5xx share of requests that raises the alarm (1 %). */
const API_5XX_RATE_THRESHOLD = 0.01;
/** Ledger writer lag (commit → mined) that raises the alarm: 5 minutes, in ms. */
const LEDGER_LAG_ALARM_MS = 300_000;
/** Age of the oldest ledger write waiting in its queue that raises the alarm, in seconds. */
const LEDGER_QUEUE_AGE_ALARM_SECONDS = 600;
/** Age of the oldest open ledger write (commit → now, LedgerOldestPendingAge) that raises the alarm, in seconds. */
export const LEDGER_OLDEST_PENDING_ALARM_SECONDS = 900;
/** The `alarm` values logged when a ledger write or a chain event is parked (one source: the use cases). */
export const PARKED_ALARM_KEYS = [LEDGER_WRITE_PARKED_ALARM, CHAIN_EVENT_PARKED_ALARM] as const;
/** Metric of the parked log metric filter (same namespace as the business metrics). */
export const PARKED_METRIC = 'ParkedAlarms';

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  /** Create the alarms and the ops topic (stage setting `alarmsEnabled`). */
  alarmsEnabled: boolean;
  /** The EMF namespace the functions write to (their POWERTOOLS_METRICS_NAMESPACE). */
  namespace: string;
  api: RestApi;
  stateMachine: StateMachine;
  functions: ReadonlyMap<string, ServiceFunction>;
  /** The ledger writer's queue (its age is the stuck-writer signal). */
  ledgerWriteQueue: Queue;
  /** Email address subscribed to the ops topic (context `opsAlarmEmail`); none when absent. */
  opsEmail?: string;
  /** The merchant balance (USD) below which PayoutMerchantBalanceLow fires (settings `payoutBalanceAlarmUsd`). */
  payoutBalanceAlarmUsd: number;
}

/** Dashboard, ops topic and alarms. Create it after every queue of the stack exists (it finds the dead-letter queues by walking the stack). */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  /** The nested stack holding the metric filters, the ops topic, its key and the alarms (the dashboard stays in the main stack). */
  readonly nested: NestedStack;
  /** The ops topic alarms notify (only with alarms enabled). */
  readonly opsTopic?: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    // The main stack: its name makes the dashboard and alarm names, and its queues are the ones watched.
    const stack = Stack.of(this);
    const nested = new NestedStack(this, 'Alarms', {
      description: `${stack.stackName}: log metric filters, ops alarm topic and its key, alarms`,
    });
    this.nested = nested;
    const ns = props.namespace;
    const service = { [SERVICE_DIMENSION]: 'coffee-trace' };
    const metric = (
      name: MetricName | typeof FORGED_EVENT_METRIC | typeof PARKED_METRIC,
      statistic: string,
      period = Duration.minutes(5),
      dims: Record<string, string> = service,
      label?: string,
    ) => new Metric({ namespace: ns, metricName: name, dimensionsMap: dims, statistic, period, ...(label ? { label } : {}) });
    const search = (name: MetricName, dims: string[], label: string) =>
      new MathExpression({
        expression: `SEARCH('{${ns},${[SERVICE_DIMENSION, ...dims].join(',')}} MetricName="${name}"', 'Sum', 300)`,
        label,
        period: Duration.minutes(5),
      });

    // Forged or mismatched events: the use cases' alarm log keys, in the functions that log them.
    const forgedPattern = FilterPattern.any(...FORGED_EVENT_ALARM_KEYS.map((k) => FilterPattern.stringValue('$.alarm', '=', k)));
    // The chain-event watcher applies chain events through the same use cases as the chain-events webhook.
    const loggers = [...new Set([...routes.filter((r) => r.auth === 'webhook').map((r) => r.fn), 'ledger-writer', 'chain-event-watcher'])];
    for (const fn of loggers) {
      const f = props.functions.get(fn);
      if (!f) continue;
      new MetricFilter(nested, `Forged${pascal(fn)}`, {
        logGroup: f.logGroup,
        filterPattern: forgedPattern,
        metricNamespace: ns,
        metricName: FORGED_EVENT_METRIC,
        metricValue: '1',
      });
    }
    const forged = new Metric({ namespace: ns, metricName: FORGED_EVENT_METRIC, statistic: 'Sum', period: Duration.minutes(5) });

    // Parked ledger writes and chain events: their alarm log keys, in the functions that park them.
    const parkedPattern = FilterPattern.any(...PARKED_ALARM_KEYS.map((k) => FilterPattern.stringValue('$.alarm', '=', k)));
    for (const fn of ['ledger-writer', 'chain-event-watcher']) {
      const f = props.functions.get(fn);
      if (!f) continue;
      new MetricFilter(nested, `Parked${pascal(fn)}`, {
        logGroup: f.logGroup,
        filterPattern: parkedPattern,
        metricNamespace: ns,
        metricName: PARKED_METRIC,
        metricValue: '1',
      });
    }
    const parked = new Metric({ namespace: ns, metricName: PARKED_METRIC, statistic: 'Sum', period: Duration.minutes(5) });
    const oldestPending = metric('LedgerOldestPendingAge', 'Maximum', Duration.minutes(5), service, 'oldest open write (s)');

    const dlqs = deadLetterQueues(stack);
    const sm = props.stateMachine;
    const api = props.api;

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${stack.stackName}-operations`,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        width: 24,
        height: 2,
        markdown: `# ${stack.stackName}: operations\nBusiness metrics (namespace \`${ns}\`, EMF from the functions), API, payout state machine, queues. docs/operations.md#operating explains each metric and alarm.`,
      }),
    );
    this.dashboard.addWidgets(
      graph('Payouts', [
        metric('PayoutsCreated', 'Sum', undefined, service, 'created'),
        metric('PayoutsCompleted', 'Sum', undefined, service, 'completed'),
        metric('PayoutsFailed', 'Sum', undefined, service, 'attempts failed'),
      ]),
      graph('Payout time to COMPLETED (ms)', [
        metric('PayoutTimeToCompleted', 'p50', undefined, service, 'p50'),
        metric('PayoutTimeToCompleted', 'p95', undefined, service, 'p95'),
      ]),
      graph('Manual reviews', [metric('ManualReviews', 'Sum', Duration.hours(1), service, 'per hour')]),
    );
    this.dashboard.addWidgets(
      graph('Merchant balance by payout provider (USD)', [
        new MathExpression({
          expression: `SEARCH('{${ns},${SERVICE_DIMENSION},provider} MetricName="PayoutMerchantBalanceUsd"', 'Minimum', 300)`,
          label: '',
          period: Duration.minutes(5),
        }),
      ]),
    );
    this.dashboard.addWidgets(
      graph('Webhook rejections by reason', [search('WebhookRejections', ['webhook', 'reason'], '')]),
      graph('Forged or mismatched events (alarm log keys)', [forged]),
      graph('Outbound webhook delivery failures', [search('OutboundDeliveryFailures', ['reason'], '')]),
    );
    this.dashboard.addWidgets(
      graph(
        'Ledger writes',
        [
          metric('LedgerWriteLag', 'p95', undefined, service, 'lag p95 (ms)'),
          metric('LedgerWriteLag', 'Maximum', undefined, service, 'lag max (ms)'),
        ],
        [
          metric('LedgerWriteRetries', 'Sum', undefined, service, 'retries'),
          props.ledgerWriteQueue.metricApproximateAgeOfOldestMessage({ label: 'oldest queued (s)' }),
        ],
      ),
      graph(
        'Oldest open ledger write (s) and parked',
        [oldestPending],
        [
          metric('LedgerWritesParked', 'Sum', undefined, service, 'ledger writes parked'),
          metric('ChainEventsParked', 'Sum', undefined, service, 'chain events parked'),
        ],
      ),
      graph(
        'DDS filings',
        (['FILED', 'AVAILABLE', 'REJECTED'] as const).map((o) => metric('DdsFilings', 'Sum', undefined, { ...service, outcome: o }, o)),
      ),
      graph(
        'Evidence pins',
        (['PINNED', 'FAILED', 'ROOT_MISMATCH'] as const).map((o) =>
          metric('EvidencePins', 'Sum', undefined, { ...service, outcome: o }, o),
        ),
      ),
      graph(
        'Dead-letter queues (messages)',
        dlqs.map((q) => q.metricApproximateNumberOfMessagesVisible({ label: queueLabel(q), statistic: 'Maximum' })),
      ),
    );
    this.dashboard.addWidgets(
      graph('API requests', [
        api.metricCount({ label: 'requests' }),
        api.metricClientError({ label: '4xx' }),
        api.metricServerError({ label: '5xx' }),
      ]),
      graph('API latency (ms)', [
        api.metricLatency({ statistic: 'p50', label: 'p50' }),
        api.metricLatency({ statistic: 'p95', label: 'p95' }),
      ]),
      graph('Payout state machine', [
        sm.metricStarted({ label: 'started' }),
        sm.metricSucceeded({ label: 'succeeded' }),
        sm.metricFailed({ label: 'failed' }),
        sm.metricTimedOut({ label: 'timed out' }),
      ]),
    );

    if (!props.alarmsEnabled) {
      this.dashboard.addWidgets(
        new TextWidget({ width: 24, height: 1, markdown: 'Alarms are off in this stage (stage setting `alarmsEnabled`).' }),
      );
      return;
    }

    // The ops topic: encrypted with its own key, which CloudWatch may use (alarms cannot publish to a topic under the AWS managed key).
    const key = new Key(nested, 'OpsTopicKey', { description: `${stack.stackName} ops alarm topic`, enableKeyRotation: true });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    const topic = new Topic(nested, 'OpsTopic', { displayName: `${stack.stackName}: operations alarms`, masterKey: key, enforceSSL: true });
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` } },
      }),
    );
    if (props.opsEmail) new Subscription(nested, 'OpsEmail', { topic, protocol: SubscriptionProtocol.EMAIL, endpoint: props.opsEmail });
    this.opsTopic = topic;
    const action = new SnsAction(topic);

    const alarm = (
      id: string,
      m: IMetric,
      threshold: number,
      description: string,
      opts: { periods?: number; datapoints?: number; op?: ComparisonOperator } = {},
    ) => {
      const a = new Alarm(nested, id, {
        alarmName: `${stack.stackName}-${id}`,
        alarmDescription: description,
        metric: m,
        threshold,
        evaluationPeriods: opts.periods ?? 1,
        datapointsToAlarm: opts.datapoints ?? opts.periods ?? 1,
        comparisonOperator: opts.op ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(action);
      a.addOkAction(action);
      this.alarms.push(a);
      return a;
    };

    for (const q of dlqs) {
      alarm(
        `Dlq${pascal(queueLabel(q))}NotEmpty`,
        q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(5) }),
        1,
        `Dead-letter queue ${queueLabel(q)} holds messages: their work failed every retry. Read them in the SQS console, fix the cause, then redrive them to the source queue.`,
      );
    }
    alarm(
      'PayoutTimeToCompletedP95',
      metric('PayoutTimeToCompleted', 'p95', Duration.minutes(15)),
      TIME_TO_COMPLETED_P95_MS,
      `Payouts take more than ${TIME_TO_COMPLETED_P95_MS / 1000} s from creation to COMPLETED (p95 over 15 minutes): the payout provider is slow or its settlement webhooks are not arriving (check WebhookRejections and the provider's status).`,
      { op: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );
    alarm(
      'ManualReviews',
      metric('ManualReviews', 'Sum', Duration.hours(1)),
      MANUAL_REVIEW_ALARM_THRESHOLD,
      `${MANUAL_REVIEW_ALARM_THRESHOLD} or more payouts went to manual review within an hour: look for a provider outage or bad phone data; managers resolve each one with POST /payments/farmer-payout/{id}/resolve.`,
    );
    alarm(
      'Api5xxRate',
      api.metricServerError({ statistic: 'Average', period: Duration.minutes(5) }),
      API_5XX_RATE_THRESHOLD,
      `More than ${API_5XX_RATE_THRESHOLD * 100} % of API requests answered 5xx in two of the last three 5-minute periods: check the functions' errors on the dashboard and their logs by request_id.`,
      { periods: 3, datapoints: 2, op: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );
    alarm(
      'PayoutStateMachineFailures',
      new MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: sm.metricFailed({ period: Duration.minutes(5) }),
          timedOut: sm.metricTimedOut({ period: Duration.minutes(5) }),
          aborted: sm.metricAborted({ period: Duration.minutes(5) }),
        },
        period: Duration.minutes(5),
        label: 'executions failed, timed out or aborted',
      }),
      1,
      'A payout lifecycle execution failed, timed out or was aborted: open it in the Step Functions console; reconciliation picks the payout up, but the cause needs a look.',
    );
    alarm(
      'LedgerWriterLag',
      metric('LedgerWriteLag', 'Maximum', Duration.minutes(5)),
      LEDGER_LAG_ALARM_MS,
      `A ledger write took more than ${LEDGER_LAG_ALARM_MS / 60_000} minutes from commit to mined: the RPC endpoint or the chain is slow, or the signer lacks gas.`,
      { op: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );
    alarm(
      'LedgerWriteQueueAge',
      props.ledgerWriteQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(5) }),
      LEDGER_QUEUE_AGE_ALARM_SECONDS,
      `The oldest ledger write has waited more than ${LEDGER_QUEUE_AGE_ALARM_SECONDS / 60} minutes: the single ledger writer is stuck (ledger down, signer out of gas, a write retried forever); see its logs.`,
      { op: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );
    alarm(
      'LedgerOldestPendingWrite',
      metric('LedgerOldestPendingAge', 'Maximum', Duration.minutes(5)),
      LEDGER_OLDEST_PENDING_ALARM_SECONDS,
      `The oldest open ledger write was committed more than ${LEDGER_OLDEST_PENDING_ALARM_SECONDS / 60} minutes ago (LedgerOldestPendingAge, from the ledger-write reconciler): the single ledger writer is not landing writes (ledger down, signer out of gas, a write retried until it is parked); see its logs and npm run ledger-parked -- list.`,
      { op: ComparisonOperator.GREATER_THAN_THRESHOLD },
    );
    alarm(
      'ParkedLedgerWork',
      parked,
      1,
      `A ledger write or a chain event failed every allowed attempt and was parked (log key alarm = ${PARKED_ALARM_KEYS.join(' | ')}); the work behind it goes on. List it with npm run ledger-parked -- list, fix the cause, then retry or discard it (docs/operations.md#parked-ledger-writes).`,
    );
    alarm(
      'PayoutMerchantBalanceLow',
      metric('PayoutMerchantBalanceUsd', 'Minimum', Duration.minutes(5)),
      props.payoutBalanceAlarmUsd,
      `A payout provider's merchant balance is below ${props.payoutBalanceAlarmUsd} USD (PayoutMerchantBalanceUsd, from the balance monitor; setting payoutBalanceAlarmUsd): payouts fail with INSUFFICIENT_BALANCE once it cannot cover them. Top up the merchant account with the provider; the dashboard shows each provider's balance (docs/operations.md#merchant-balance-alarm).`,
      { op: ComparisonOperator.LESS_THAN_THRESHOLD },
    );
    alarm(
      'ForgedEvents',
      forged,
      1,
      `A webhook event was forged or does not match the ledger or the provider (log key alarm = ${FORGED_EVENT_ALARM_KEYS.join(' | ')}): nothing was applied. Find the log lines with that key; check who holds the webhook secret.`,
    );

    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', width: 24, height: 4, alarms: this.alarms }));
  }
}

/** Every queue of the stack that is some queue's dead-letter queue, in construct order. */
export function deadLetterQueues(stack: Stack): Queue[] {
  const out: Queue[] = [];
  for (const c of stack.node.findAll()) {
    if (c instanceof Queue && c.deadLetterQueue && c.deadLetterQueue.queue instanceof Queue && !out.includes(c.deadLetterQueue.queue))
      out.push(c.deadLetterQueue.queue);
  }
  return out;
}

/** A queue's construct id, e.g. `LedgerWriteQueueDlq`. */
function queueLabel(q: Queue): string {
  return q.node.id;
}

function graph(title: string, left: IMetric[], right: IMetric[] = []): GraphWidget {
  return new GraphWidget({ title, left, right, width: 8, height: 6 });
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/**
 * Context `opsAlarmEmail` (`cdk deploy -c stage=prod -c opsAlarmEmail=ops@example.com`): the address
 * subscribed to the ops topic (it confirms by email). Absent or empty: no subscription.
 * @throws Error when it is not an email address.
 */
export function readOpsAlarmEmail(scope: Construct): string | undefined {
  const raw = scope.node.tryGetContext('opsAlarmEmail') as unknown;
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw)) throw new Error('context opsAlarmEmail must be an email address');
  return raw;
}
