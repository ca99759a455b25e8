/**
 * Observability in the template (issue 11, infra/stack/observability.ts): the dashboard in every
 * stage; with alarmsEnabled (every stage by default) the ops topic and the alarms, each notifying it; none with `-c alarms=off`.
 * The dashboard is in the main template; the metric filters, ops topic, key and alarms in the
 * nested stack `Observability/Alarms`, whose parameters are resolved to the main stack's resources.
 * Synthesized with cdk.json's context and bundling skipped (the assets are not asserted here).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CoffeeTraceStack } from '../../infra/stack/coffee-trace-stack';
import {
  deadLetterQueues,
  FORGED_EVENT_ALARM_KEYS,
  FORGED_EVENT_METRIC,
  LEDGER_OLDEST_PENDING_ALARM_SECONDS,
  MANUAL_REVIEW_ALARM_THRESHOLD,
  PARKED_ALARM_KEYS,
  PARKED_METRIC,
  TIME_TO_COMPLETED_P95_MS,
} from '../../infra/stack/observability';
import { readStage, type StageName } from '../../infra/stack/stage';
import { nestedTemplate } from './nested-templates';
import { flatTemplate } from '../../infra/tools/stack-templates';
import { routes } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';

jest.setTimeout(120_000);

type Json = Record<string, any>;
const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Json };

function synth(stage: StageName, extra: Json = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], stage, ...extra } });
  const stack = new CoffeeTraceStack(app, readStage(app).stackName);
  const template = Template.fromStack(stack);
  const nested = nestedTemplate(stack.observability.nested);
  // Everything, the functions' nested stacks included, references resolved across templates (infra/tools/stack-templates.ts).
  const flat = flatTemplate(stack).Resources as Record<string, Json>;
  /** The alarms' nested stack's resources as in `flat`. */
  const alarmsFlat = Object.fromEntries(Object.keys(nested.resources).map((id) => [id, flat[id]!]));
  return { app, stack, template, resources: template.toJSON().Resources as Record<string, Json>, nested, flat, alarmsFlat };
}
const ofType = (resources: Record<string, Json>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
/** The logical id of a function's log group in prod (in its area's nested template). */
const logGroupId = (fn: string) => {
  const g = prod.stack.functions.get(fn)!.logGroup;
  return g.stack.getLogicalId(g.node.defaultChild as never);
};

let prod: ReturnType<typeof synth>;
let dev: ReturnType<typeof synth>;
beforeAll(() => {
  prod = synth('prod', { opsAlarmEmail: 'ops@example.com', payoutBalanceAlarmUsd: '2500' });
  dev = synth('dev', { alarms: 'off' });
});

describe('prod (alarms enabled)', () => {
  const alarms = () => ofType(prod.nested.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties as Json);
  const alarmNamed = (suffix: string) => {
    const a = alarms().find((p) => p.AlarmName === `CoffeeTrace-prod-${suffix}`);
    if (!a)
      throw new Error(
        `no alarm ${suffix}: ${alarms()
          .map((p) => p.AlarmName)
          .join(', ')}`,
      );
    return a;
  };

  test('an encrypted, TLS-only ops topic CloudWatch may publish to, with the email from context', () => {
    const [[topicId, topic]] = ofType(prod.nested.resources, 'AWS::SNS::Topic').filter(([id]) => id.startsWith('OpsTopic')) as [
      [string, Json],
    ];
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^OpsTopicKey/), 'Arn'] });
    prod.nested.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'] }),
        ]),
      },
    });
    prod.nested.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' })]),
      },
    });
    prod.nested.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    // every alarm notifies the ops topic when it fires and when it clears
    for (const a of alarms()) {
      expect(a.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(a.OKActions).toEqual([{ Ref: topicId }]);
    }
  });

  test('one alarm per dead-letter queue (every DLQ of the stack), at one visible message', () => {
    const dlqs = deadLetterQueues(prod.stack);
    expect(dlqs.length).toBeGreaterThanOrEqual(3);
    const dlqIds = dlqs.map((q) => prod.stack.getLogicalId(q.node.defaultChild as never));
    const dlqAlarms = alarms().filter((a) => /-Dlq.*NotEmpty$/.test(a.AlarmName));
    expect(dlqAlarms.map((a) => (prod.nested.resolve(a.Dimensions[0].Value) as Json)['Fn::GetAtt']).sort()).toEqual(
      dlqIds.map((id) => [id, 'QueueName']).sort(),
    );
    for (const a of dlqAlarms)
      expect(a).toMatchObject({
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Namespace: 'AWS/SQS',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
  });

  test("payout time to COMPLETED p95 over 60 s, manual reviews per hour, ledger lag and queue age (business metrics in the stack's namespace)", () => {
    expect(alarmNamed('PayoutTimeToCompletedP95')).toMatchObject({
      Namespace: 'CoffeeTrace-prod',
      MetricName: 'PayoutTimeToCompleted',
      ExtendedStatistic: 'p95',
      Threshold: TIME_TO_COMPLETED_P95_MS,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [{ Name: 'service', Value: 'coffee-trace' }],
      TreatMissingData: 'notBreaching',
    });
    expect(alarmNamed('ManualReviews')).toMatchObject({
      MetricName: 'ManualReviews',
      Statistic: 'Sum',
      Period: 3600,
      Threshold: MANUAL_REVIEW_ALARM_THRESHOLD,
    });
    expect(alarmNamed('LedgerWriterLag')).toMatchObject({ MetricName: 'LedgerWriteLag', Statistic: 'Maximum', Threshold: 300_000 });
    expect(alarmNamed('LedgerWriteQueueAge')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Namespace: 'AWS/SQS',
      Threshold: 600,
    });
  });

  test('API 5xx rate, state-machine failures, forged events', () => {
    expect(alarmNamed('Api5xxRate')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Statistic: 'Average',
      Threshold: 0.01,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    const sfn = alarmNamed('PayoutStateMachineFailures');
    expect(
      sfn.Metrics.map((m: Json) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort(),
    ).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    expect(alarmNamed('ForgedEvents')).toMatchObject({
      Namespace: 'CoffeeTrace-prod',
      MetricName: FORGED_EVENT_METRIC,
      Statistic: 'Sum',
      Threshold: 1,
    });
  });

  test("forged-event metric filters on the webhook functions, the ledger writer and the chain-event watcher match the use cases' alarm log keys", () => {
    const filters = ofType(prod.alarmsFlat, 'AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties as Json)
      .filter((p) => p.MetricTransformations[0].MetricName === FORGED_EVENT_METRIC);
    const fns = [...new Set([...routes.filter((r) => r.auth === 'webhook').map((r) => r.fn), 'ledger-writer', 'chain-event-watcher'])];
    expect(filters).toHaveLength(fns.length);
    const logGroups = fns.map((fn) => logGroupId(fn)).sort();
    expect(filters.map((f) => (f.LogGroupName as Json).Ref).sort()).toEqual(logGroups);
    for (const f of filters) {
      for (const key of FORGED_EVENT_ALARM_KEYS) expect(f.FilterPattern).toContain(`$.alarm = "${key}"`);
      expect(f.MetricTransformations[0]).toMatchObject({ MetricNamespace: 'CoffeeTrace-prod', MetricValue: '1' });
    }
    expect(FORGED_EVENT_ALARM_KEYS).toEqual([
      'FORGED_OR_MISMATCHED_CHAIN_EVENT',
      'FORGED_OR_UNEXPECTED_BUYER_PAYMENT',
      'FORGED_OR_MISMATCHED_WEBHOOK',
      'FORGED_OR_MISMATCHED_ONRAMP_WEBHOOK',
    ]);
  });

  test('the merchant balance alarm takes its threshold from the context payoutBalanceAlarmUsd (docs/operations.md#merchant-balance-alarm)', () => {
    expect(alarmNamed('PayoutMerchantBalanceLow')).toMatchObject({
      Namespace: 'CoffeeTrace-prod',
      MetricName: 'PayoutMerchantBalanceUsd',
      Statistic: 'Minimum',
      Threshold: 2500,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'notBreaching',
      Dimensions: [{ Name: 'service', Value: 'coffee-trace' }],
    });
    expect(() => synth('prod', { payoutBalanceAlarmUsd: 'lots' })).toThrow(/payoutBalanceAlarmUsd/);
  });

  test('the oldest open ledger write: alarm on LedgerOldestPendingAge; parked ledger writes and chain events: alarm on their log keys in the writer and the watcher', () => {
    expect(alarmNamed('LedgerOldestPendingWrite')).toMatchObject({
      Namespace: 'CoffeeTrace-prod',
      MetricName: 'LedgerOldestPendingAge',
      Statistic: 'Maximum',
      Period: 300,
      Threshold: LEDGER_OLDEST_PENDING_ALARM_SECONDS,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [{ Name: 'service', Value: 'coffee-trace' }],
    });
    expect(alarmNamed('ParkedLedgerWork')).toMatchObject({
      Namespace: 'CoffeeTrace-prod',
      MetricName: PARKED_METRIC,
      Statistic: 'Sum',
      Threshold: 1,
    });
    const filters = ofType(prod.alarmsFlat, 'AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties as Json)
      .filter((p) => p.MetricTransformations[0].MetricName === PARKED_METRIC);
    const logGroups = ['ledger-writer', 'chain-event-watcher'].map((fn) => logGroupId(fn)).sort();
    expect(filters.map((f) => (f.LogGroupName as Json).Ref).sort()).toEqual(logGroups);
    for (const f of filters) for (const key of PARKED_ALARM_KEYS) expect(f.FilterPattern).toContain(`$.alarm = "${key}"`);
    expect(PARKED_ALARM_KEYS).toEqual(['LEDGER_WRITE_PARKED', 'CHAIN_EVENT_PARKED']);
  });

  test("functions write their EMF metrics to the stack's namespace", () => {
    expect(prod.stack.functions.size).toBeGreaterThan(20);
    for (const f of prod.stack.functions.values()) {
      const fn = prod.flat[f.fn.stack.getLogicalId(f.fn.node.defaultChild as never)]!;
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe('CoffeeTrace-prod');
    }
  });

  test('the dashboard shows the business metrics, API, state machine, DLQs and the alarms', () => {
    const [[, dash]] = ofType(prod.resources, 'AWS::CloudWatch::Dashboard') as [[string, Json]];
    expect(dash.Properties.DashboardName).toBe('CoffeeTrace-prod-operations');
    const body = JSON.stringify(dash.Properties.DashboardBody);
    for (const s of [
      'PayoutsCreated',
      'PayoutsCompleted',
      'PayoutsFailed',
      'PayoutTimeToCompleted',
      'ManualReviews',
      'WebhookRejections',
      'LedgerWriteLag',
      'LedgerWriteRetries',
      'DdsFilings',
      'OutboundDeliveryFailures',
      FORGED_EVENT_METRIC,
      'LedgerOldestPendingAge',
      'LedgerWritesParked',
      'ChainEventsParked',
      '5XXError',
      'ExecutionsFailed',
      'ApproximateNumberOfMessagesVisible',
      'alarm',
    ]) {
      expect(body).toContain(s);
    }
  });

  test('the dashboard is in the main template; the metric filters, ops topic, key and alarms only in the nested stack', () => {
    expect(ofType(prod.resources, 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
    expect(ofType(prod.nested.resources, 'AWS::CloudWatch::Dashboard')).toEqual([]);
    for (const type of ['AWS::CloudWatch::Alarm', 'AWS::Logs::MetricFilter'])
      expect({ type, main: ofType(prod.resources, type) }).toEqual({ type, main: [] });
    // The main stack's only KMS keys are the stateful ones (ledger signer, outbound webhook secrets); the ops topic's key is nested.
    expect(ofType(prod.resources, 'AWS::KMS::Key').filter(([id]) => !id.startsWith('Stateful'))).toEqual([]);
    expect(ofType(prod.resources, 'AWS::SNS::Topic').filter(([id]) => id.startsWith('Observability'))).toEqual([]);
    expect(ofType(prod.nested.resources, 'AWS::CloudWatch::Alarm')).toHaveLength(prod.stack.observability.alarms.length);
    expect(prod.stack.observability.alarms.length).toBeGreaterThanOrEqual(12);
  });

  test('cdk-nag AwsSolutions: no unacknowledged findings on the observability resources', () => {
    const report = new AwsSolutionsChecks(prod.app, { verbose: true }).validateScope(prod.app);
    const ours = report.violations.filter((v) => v.violatingResources.some((r) => r.constructPath?.includes('/Observability/')));
    expect(ours.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});

describe('dev with -c alarms=off', () => {
  test('the dashboard but no alarm, no ops topic, no key', () => {
    expect(ofType(dev.resources, 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
    for (const resources of [dev.resources, dev.nested.resources]) {
      expect(ofType(resources, 'AWS::CloudWatch::Alarm')).toEqual([]);
      expect(ofType(resources, 'AWS::KMS::Key').filter(([id]) => !id.startsWith('Stateful'))).toEqual([]);
    }
    expect(ofType(dev.resources, 'AWS::SNS::Topic').filter(([id]) => id.startsWith('Observability'))).toEqual([]);
    expect(ofType(dev.nested.resources, 'AWS::SNS::Topic')).toEqual([]);
    // the forged-event metric filters do not depend on the alarms
    expect(ofType(dev.nested.resources, 'AWS::Logs::MetricFilter').length).toBeGreaterThan(0);
  });
});
