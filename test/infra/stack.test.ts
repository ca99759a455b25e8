/**
 * Template assertions on CoffeeTraceStack, synthesized once (bundling 21 functions takes a while).
 * The app gets cdk.json's context (feature flags and setting defaults), so it is the template
 * `npm run synth` produces, plus one manager subscription.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { AwsSolutionsChecks } from 'cdk-nag';
import {
  BUNDLE_BANNER,
  BUNDLE_EXTERNALS,
  BUNDLE_RUNTIME_ENV,
  esbuildOptionsFor,
  functionEntry,
  lambdaBundling,
  FUNCTION_LAYER_FILES,
  POWERTOOLS_PACKAGES,
  powertoolsLayerParameter,
  powertoolsVersion,
} from '../../infra/bundling';
import { CoffeeTraceStack, functionSpecs, scheduleOf } from '../../infra/stack/coffee-trace-stack';
import { GATEWAY_ERRORS, STAGE_NAME } from '../../infra/stack/http-api';
import { deletablePartitions, TABLE_DENIED_ACTIONS } from '../../infra/stack/needs';
import { aslPlaceholders, payoutAslPath } from '../../infra/stack/payout-state-machine';
import { SETTING_DEFAULTS } from '../../infra/stack/settings';
import { STAGES } from '../../infra/stack/stage';
import { THROTTLE } from '../../infra/stack/rate-limits';
import {
  AUTHORIZER_FN,
  COMMON_ENV,
  functionManifest,
  NEEDS,
  QUEUES,
  queuesOf,
  routes,
  workers,
  type QueueConsumerDef,
} from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { DEFAULT_PAYOUT_BALANCE_ALARM_USD } from '../../shared/domain/payout-balance';

import {
  type Json,
  MANAGER,
  app,
  cdkJson,
  fnLogicalId,
  mainResources,
  ofType,
  resourcePath,
  resources,
  stack,
  synthesizeStack,
  template,
  triggers,
} from './stack-fixture';

jest.setTimeout(240_000);

beforeAll(synthesizeStack);

describe('API Gateway', () => {
  test('exactly one method per route (method + path)', () => {
    const methods = ofType('AWS::ApiGateway::Method').map(([, m]) => `${m.Properties.HttpMethod} ${resourcePath(m.Properties.ResourceId)}`);
    expect(methods.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
  });

  test('jwt routes use the REQUEST authorizer; webhook and public routes none', () => {
    const [authorizerId, authorizer] = ofType('AWS::ApiGateway::Authorizer')[0]!;
    expect(ofType('AWS::ApiGateway::Authorizer')).toHaveLength(1);
    expect(authorizer.Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toContain(fnLogicalId(AUTHORIZER_FN));

    for (const [, m] of ofType('AWS::ApiGateway::Method')) {
      const key = `${m.Properties.HttpMethod} ${resourcePath(m.Properties.ResourceId)}`;
      const route = routes.find((r) => `${r.method} ${r.path}` === key)!;
      if (route.auth === 'jwt') {
        expect(m.Properties).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
      } else {
        expect(m.Properties.AuthorizationType).toBe('NONE');
        expect(m.Properties.AuthorizerId).toBeUndefined();
      }
      expect(m.Properties.Integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(m.Properties.Integration.Uri)).toContain(fnLogicalId(route.fn));
    }
  });

  test("API Gateway may invoke each route's function for exactly that method and path on the prod stage (permissions in the nested stack Triggers); only the authorizer's in the main template", () => {
    const [apiId] = ofType('AWS::ApiGateway::RestApi')[0]!;
    const fromApi = Object.values(triggers).filter(
      (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties.Principal === 'apigateway.amazonaws.com',
    );
    expect(fromApi).toHaveLength(routes.length);
    const granted = fromApi.map((r) => {
      expect(r.Properties.Action).toBe('lambda:InvokeFunction');
      const [head, tail] = (r.Properties.SourceArn['Fn::Join'][1] as unknown[]).slice(-2) as [Json, string];
      expect(head).toEqual({ Ref: apiId });
      const fn = (r.Properties.FunctionName as Json)['Fn::GetAtt'];
      return `${fn[0]} ${fn[1]} ${tail}`;
    });
    // methodArn: stage, method, path with every path parameter as *
    const expected = routes.map((r) => `${fnLogicalId(r.fn)} Arn /${STAGE_NAME}/${r.method}${r.path.replace(/\{[^}]*\}/g, '*')}`);
    expect(granted.sort()).toEqual(expected.sort());
    const inMain = Object.entries(mainResources).filter(
      ([, r]) => r.Type === 'AWS::Lambda::Permission' && r.Properties.Principal === 'apigateway.amazonaws.com',
    );
    expect(inMain).toHaveLength(1);
    expect(inMain[0]![1].Properties.FunctionName).toEqual({ 'Fn::GetAtt': [fnLogicalId(AUTHORIZER_FN), 'Arn'] });
  });

  test('stage prod: throttled 200/400 (4× the per-token rate), access-logged, traced', () => {
    expect(THROTTLE).toEqual({ rateLimit: 200, burstLimit: 400 });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      TracingEnabled: true,
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400, DataTraceEnabled: false })],
    });
  });

  test('gateway responses answer in the error envelope', () => {
    for (const g of GATEWAY_ERRORS) {
      const [, r] = ofType('AWS::ApiGateway::GatewayResponse').find(([, x]) => x.Properties.ResponseType === g.type.responseType)!;
      expect(r.Properties.StatusCode).toBe(String(g.status));
      const body = JSON.stringify(r.Properties.ResponseTemplates['application/json']);
      expect(body).toContain(`\\"code\\":\\"${g.code}\\"`);
      expect(body).toContain(`/errors#${g.code}`);
      expect(body).toContain('$context.requestId');
      expect(r.Properties.ResponseParameters).toMatchObject({
        'gatewayresponse.header.x-content-type-options': "'nosniff'",
        'gatewayresponse.header.referrer-policy': "'no-referrer'",
        'gatewayresponse.header.strict-transport-security': "'max-age=31536000'",
      });
    }
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
    });
  });

  test('outputs: API URL and webhook URLs', () => {
    const outputs = template.toJSON().Outputs as Json;
    expect(outputs.ApiUrl).toBeDefined();
    for (const r of routes.filter((x) => x.auth === 'webhook')) {
      const out = Object.values(outputs).find((o: Json) => JSON.stringify(o.Value).includes(r.path.slice(1)));
      expect(out).toBeDefined();
    }
  });
});

describe('Lambda functions', () => {
  const specs = functionSpecs();

  test('one function per distinct fn (routes, workers, authorizer), all nodejs22.x on arm64', () => {
    const fns = new Set([...routes.map((r) => r.fn), ...workers.map((w) => w.fn), AUTHORIZER_FN]);
    expect(specs.map((s) => s.fn).sort()).toEqual([...fns].sort());
    const lambdas = ofType('AWS::Lambda::Function');
    expect(lambdas).toHaveLength(fns.size);
    for (const [, l] of lambdas) {
      expect(l.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
      });
      expect(l.Properties.LoggingConfig.LogGroup).toBeDefined();
    }
  });

  test("memory and timeouts are the manifest's; explicit log groups", () => {
    for (const m of functionManifest()) {
      const p = resources[fnLogicalId(m.fn)]!.Properties;
      expect({ fn: m.fn, memory: p.MemorySize, timeout: p.Timeout }).toEqual({ fn: m.fn, memory: m.memoryMiB, timeout: m.timeoutSeconds });
      expect(p.MemorySize).toBe(m.needs.includes('ledger') ? 1024 : 512);
      const worker = workers.find((w) => w.fn === m.fn);
      if (worker) expect(p.Timeout).toBe(worker.timeoutSeconds);
      else expect(p.Timeout).toBeLessThanOrEqual(29);
      const logGroup = resources[p.LoggingConfig.LogGroup.Ref]!;
      expect(logGroup.Properties.RetentionInDays).toBe(STAGES.dev.logRetention); // no -c stage: dev
    }
  });

  const COMMON = [...COMMON_ENV, ...Object.keys(BUNDLE_RUNTIME_ENV)];
  /** The template parameter resolving the official Powertools layer's ARN from AWS's public SSM parameter, at the installed version. */
  const powertoolsParameterId = () =>
    Object.entries(template.toJSON().Parameters as Record<string, Json>).find(
      ([, p]) => p.Type === 'AWS::SSM::Parameter::Value<String>' && p.Default === powertoolsLayerParameter(powertoolsVersion()),
    )?.[0];

  test('Powertools comes from its official layer at the version in package-lock.json (the bundles leave it out)', () => {
    const locked = JSON.parse(readFileSync(join(repoRoot(), 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    };
    for (const p of POWERTOOLS_PACKAGES)
      expect(locked.packages[`node_modules/@aws-lambda-powertools/${p}`]!.version).toBe(powertoolsVersion());
    expect(powertoolsParameterId()).toBeDefined();
    expect(powertoolsLayerParameter(powertoolsVersion())).toBe(`/aws/service/powertools/typescript/generic/all/${powertoolsVersion()}`);
    expect(BUNDLE_EXTERNALS).toContain('@aws-lambda-powertools/*');
  });

  test("links and security headers: every function runs with SERVICE_RUNTIME=aws (HSTS) and PUBLIC_BASE_URL from the PublicBaseUrl parameter (https or empty = the API's own URL)", () => {
    const params = template.toJSON().Parameters as Record<string, Json>;
    expect(params.PublicBaseUrl).toMatchObject({ Type: 'String', Default: '' });
    const pattern = new RegExp(params.PublicBaseUrl!.AllowedPattern as string);
    for (const ok of ['', 'https://trace.example.com', 'https://abc.execute-api.eu-west-1.amazonaws.com/prod'])
      expect(pattern.test(ok)).toBe(true);
    for (const bad of [
      'http://trace.example.com',
      'javascript:alert(1)//',
      'https://trace.example.com/',
      'https://trace.example.com/?a=1',
      'https://u:p@trace.example.com',
    ])
      expect(pattern.test(bad)).toBe(false);
    for (const m of functionManifest()) {
      const vars = resources[fnLogicalId(m.fn)]!.Properties.Environment.Variables as Json;
      expect([m.fn, vars.SERVICE_RUNTIME]).toEqual([m.fn, 'aws']);
      expect(JSON.stringify(vars.PUBLIC_BASE_URL)).toContain('PublicBaseUrl');
    }
  });

  test("environment: common variables plus exactly the names the manifest gives the function's needs", () => {
    for (const m of functionManifest()) {
      const props = resources[fnLogicalId(m.fn)]!.Properties;
      const all = props.Environment.Variables as Json;
      // The Parameters and Secrets extension's own settings sit beside ours on functions that read secrets.
      const isExtensionSetting = (k: string) => /^(PARAMETERS_SECRETS_EXTENSION_|SECRETS_MANAGER_|SSM_PARAMETER_STORE_)/.test(k);
      const readsSecrets = m.secrets.length > 0;
      expect(Object.keys(all).some(isExtensionSetting)).toBe(readsSecrets);
      // Layers: Powertools (on every function), the extension on functions that read secrets, and a function's static files (FUNCTION_LAYER_FILES); CDK orders them by construct path, and their files do not overlap.
      expect((props.Layers ?? []).length).toBe(1 + (readsSecrets ? 1 : 0) + (FUNCTION_LAYER_FILES[m.fn] ? 1 : 0));
      expect(props.Layers).toContainEqual({ Ref: powertoolsParameterId() });
      if (readsSecrets) expect(all.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT).toBe('2773');
      const env = Object.fromEntries(Object.entries(all).filter(([k]) => !isExtensionSetting(k))) as Json;
      const fromNeeds = m.needs.flatMap((n) => [...NEEDS[n].env, ...NEEDS[n].secrets.map((x) => x.arnVariable)]);
      expect(m.env).toEqual([...new Set(fromNeeds)].sort());
      expect({ fn: m.fn, env: Object.keys(env).sort() }).toEqual({ fn: m.fn, env: [...new Set([...COMMON, ...m.env])].sort() });
      expect(env.POWERTOOLS_SERVICE_NAME).toBe('coffee-trace');
      expect(env.LOG_LEVEL).toBe('INFO');
    }
  });

  test('deletes are denied except a never-sent payout and its guard; only table users may read or write it', () => {
    for (const spec of specs) {
      const roleId = stack.getLogicalId(stack.functions.get(spec.fn)!.role.node.defaultChild as CfnResource);
      const policy = ofType('AWS::IAM::Policy').find(([, p]) => p.Properties.Roles.some((r: Json) => r.Ref === roleId));
      expect(policy).toBeDefined();
      const statements = policy![1].Properties.PolicyDocument.Statement as Json[];
      const actions = (s: Json) => [s.Action].flat() as string[];
      const allowed = statements.filter((s) => s.Effect === 'Allow').flatMap(actions);
      const deletable = deletablePartitions(spec.needs);
      if (deletable.length > 0) {
        // Deletes only in the partitions the needs name (payout discards, loan guards): allowed there, denied elsewhere.
        const denyAll = statements.find((s) => s.Effect === 'Deny' && actions(s).includes('dynamodb:BatchWriteItem') && !s.Condition);
        expect(denyAll && actions(denyAll).sort()).toEqual(TABLE_DENIED_ACTIONS.filter((a) => a !== 'dynamodb:DeleteItem').sort());
        const denyElsewhere = statements.find(
          (s) => s.Effect === 'Deny' && actions(s).includes('dynamodb:DeleteItem') && s.Condition?.['ForAnyValue:StringNotLike'],
        );
        expect(denyElsewhere!.Condition).toEqual({ 'ForAnyValue:StringNotLike': { 'dynamodb:LeadingKeys': deletable } });
        const allowDelete = statements.find((s) => s.Effect === 'Allow' && actions(s).includes('dynamodb:DeleteItem'));
        expect(allowDelete!.Condition).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': deletable },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        });
      } else {
        const deny = statements.find((s) => s.Effect === 'Deny' && actions(s).includes('dynamodb:DeleteItem') && !s.Condition);
        expect(deny && actions(deny).sort()).toEqual([...TABLE_DENIED_ACTIONS].sort());
        expect(allowed).not.toContain('dynamodb:DeleteItem');
      }
      expect(allowed).not.toContain('dynamodb:Scan');
      const usesTable = spec.needs.has('table:read') || spec.needs.has('table:write');
      expect(allowed.some((a) => a.startsWith('dynamodb:'))).toBe(usesTable);
      expect(allowed.includes('dynamodb:PutItem')).toBe(spec.needs.has('table:write'));
    }
    // Audit entries cannot be updated.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*'] } },
          }),
        ]),
      },
    });
  });

  test('no AWS managed policies on function roles', () => {
    for (const spec of specs) {
      const roleId = stack.getLogicalId(stack.functions.get(spec.fn)!.role.node.defaultChild as CfnResource);
      expect(resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  test("queue consumers: one SQS event source per queue feeding them, from the manifest's queues with its batch size, partial batch failures", () => {
    const consumers = workers.filter((x): x is QueueConsumerDef => x.kind === 'queue-consumer');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, x]) => !x.Properties.EventSourceArn['Fn::GetAtt']?.includes('StreamArn'),
    );
    expect(mappings).toHaveLength(consumers.reduce((n, w) => n + queuesOf(w).length, 0));
    for (const w of consumers) {
      const mine = mappings.filter(([, x]) => x.Properties.FunctionName.Ref === fnLogicalId(w.fn));
      const queueIds = queuesOf(w).map((q) => stack.getLogicalId(stack.stateful.queues[q].node.defaultChild as CfnResource));
      expect(mine.map(([, m]) => m.Properties.EventSourceArn).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
        queueIds.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      );
      for (const [, mapping] of mine) {
        expect({ fn: w.fn, batchSize: mapping.Properties.BatchSize }).toEqual({ fn: w.fn, batchSize: w.batchSize });
        expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      }
    }
    // The single ledger writer is fed by its writes queue and, beside it, its receipt-checks queue (docs/ledger.md#the-pipelined-writer).
    expect(queuesOf(consumers.find((w) => w.fn === 'ledger-writer')!)).toEqual(['ledger-write-queue', 'ledger-receipt-queue']);
    // The single ledger writer takes up to 10 messages of its FIFO queue an invocation (docs/ledger.md#batches-of-queue-messages).
    const writer = consumers.find((w) => w.fn === 'ledger-writer')!;
    const [, writerMapping] = mappings.find(([, x]) => x.Properties.FunctionName.Ref === fnLogicalId('ledger-writer'))!;
    expect(writerMapping.Properties.BatchSize).toBe(10);
    expect(writer.batchSize).toBe(10);
  });

  test("table-stream consumers (outbound webhooks): the table's stream, filtered to the manifest's entities, bisected and retried, then to the outbound DLQ", () => {
    const streamConsumers = workers.filter((x) => x.kind === 'table-stream-consumer');
    expect(streamConsumers.map((w) => w.fn)).toEqual(['outbound-event-publisher', 'payout-receipt-sender']);
    const tableId = stack.getLogicalId(stack.stateful.table.node.defaultChild as CfnResource);
    expect(resources[tableId]!.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    for (const w of streamConsumers) {
      const [, mapping] = ofType('AWS::Lambda::EventSourceMapping').find(([, x]) => x.Properties.FunctionName.Ref === fnLogicalId(w.fn))!;
      expect(mapping.Properties).toMatchObject({
        EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
        BatchSize: w.batchSize,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        StartingPosition: 'TRIM_HORIZON',
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(JSON.parse(mapping.Properties.FilterCriteria.Filters[0].Pattern)).toEqual({
        dynamodb: { NewImage: { entity: { S: w.entities } } },
      });
      const dlq = stack.stateful.queues['outbound-webhook-queue'].deadLetterQueue!.queue;
      expect(mapping.Properties.DestinationConfig.OnFailure.Destination).toEqual({
        'Fn::GetAtt': [stack.getLogicalId(dlq.node.defaultChild as CfnResource), 'Arn'],
      });
    }
  });
});

describe('payout state machine', () => {
  const asl = readFileSync(payoutAslPath(), 'utf8');

  test('Standard, logs ALL without execution data, traced, named as functions expect', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      StateMachineName: 'CoffeeTrace-payout-lifecycle',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL', IncludeExecutionData: false }),
    });
    // Functions hold the ARN formatted from that name.
    const env = resources[fnLogicalId('create-farmer-payout')]!.Properties.Environment.Variables as Json;
    expect(JSON.stringify(env.PAYOUT_STATE_MACHINE_ARN)).toContain(':stateMachine:CoffeeTrace-payout-lifecycle');
  });

  test('definition has every ASL state; placeholders = substitution keys, each a worker function ARN', () => {
    const [, sm] = ofType('AWS::StepFunctions::StateMachine')[0]!;
    const definition = sm.Properties.DefinitionString as string;
    expect(typeof definition).toBe('string');
    for (const state of Object.keys(JSON.parse(asl).States as Json)) expect(definition).toContain(`"${state}"`);
    const subs = sm.Properties.DefinitionSubstitutions as Json;
    expect(aslPlaceholders(asl)).toEqual(Object.keys(subs).sort());
    for (const [key, value] of Object.entries(subs)) {
      const worker = workers.find((w) => w.substitution === key)!;
      expect(value).toEqual({ 'Fn::GetAtt': [fnLogicalId(worker.fn), 'Arn'] });
    }
  });

  test('the state machine may invoke exactly its task functions', () => {
    const tasks = workers.filter((w) => w.substitution).map((w) => ({ 'Fn::GetAtt': [fnLogicalId(w.fn), 'Arn'] }));
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([{ Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: tasks }]) },
    });
  });
});

describe('stateful resources', () => {
  test('scheduled workers run from an EventBridge rule with their schedule', () => {
    // The rules and their invoke permissions are in the nested stack Triggers; the target ARN is its parameter, set by the main stack to the function's ARN.
    const scheduled = workers.filter((x) => x.kind === 'scheduled');
    const rules = Object.entries(triggers).filter(([, r]) => r.Type === 'AWS::Events::Rule');
    expect(rules).toHaveLength(scheduled.length);
    expect(Object.values(mainResources).filter((r) => r.Type === 'AWS::Events::Rule')).toEqual([]);
    for (const w of scheduled) {
      const target = { 'Fn::GetAtt': [fnLogicalId(w.fn), 'Arn'] };
      const rule = rules.find(([, r]) => (r.Properties.Targets as Json[]).some((t) => JSON.stringify(t.Arn) === JSON.stringify(target)));
      expect(rule).toBeDefined();
      expect(rule![1].Properties.ScheduleExpression).toBe(w.schedule);
      const permission = Object.values(triggers).find(
        (r) =>
          r.Type === 'AWS::Lambda::Permission' &&
          r.Properties.Principal === 'events.amazonaws.com' &&
          JSON.stringify(r.Properties.SourceArn) === JSON.stringify({ 'Fn::GetAtt': [rule![0], 'Arn'] }),
      );
      expect(permission?.Properties.FunctionName).toEqual(target);
    }
  });

  test('the merchant balance alarm (docs/operations.md#merchant-balance-alarm): PayoutMerchantBalanceUsd Minimum below payoutBalanceAlarmUsd notifies the ops topic; the monitor runs every 5 minutes with the same threshold', () => {
    const alarm = Object.values(resources).find(
      (r) => r.Type === 'AWS::CloudWatch::Alarm' && JSON.stringify(r.Properties.AlarmName).includes('-PayoutMerchantBalanceLow'),
    );
    expect(alarm?.Properties).toMatchObject({
      MetricName: 'PayoutMerchantBalanceUsd',
      Statistic: 'Minimum',
      Period: 300,
      Threshold: DEFAULT_PAYOUT_BALANCE_ALARM_USD,
      ComparisonOperator: 'LessThanThreshold',
      Dimensions: [{ Name: 'service', Value: 'coffee-trace' }],
    });
    const opsTopics = ofType('AWS::SNS::Topic').filter(([, t]) => /operations alarms/.test(JSON.stringify(t.Properties.DisplayName)));
    expect(opsTopics).toHaveLength(1);
    expect(alarm!.Properties.AlarmActions).toEqual([{ Ref: opsTopics[0]![0] }]);
    const monitor = workers.find((w) => w.fn === 'payout-balance-monitor')!;
    expect(monitor).toMatchObject({ kind: 'scheduled', schedule: 'rate(5 minutes)' });
    const env = resources[fnLogicalId('payout-balance-monitor')]!.Properties.Environment.Variables as Json;
    expect(env.PAYOUT_BALANCE_ALARM_USD).toBe(String(DEFAULT_PAYOUT_BALANCE_ALARM_USD));
    expect(env.MANUAL_REVIEW_TOPIC_ARN).toBeDefined();
  });

  test('the audit-anchorer runs every ANCHOR_INTERVAL_S: rate(5 minutes) by default, the deploy context overrides it in whole minutes', () => {
    const anchorer = workers.find((w) => w.fn === 'audit-anchorer')!;
    expect(anchorer.kind).toBe('scheduled');
    if (anchorer.kind !== 'scheduled') return;
    expect(scheduleOf(new App({ context: {} }), anchorer)).toBe('rate(5 minutes)');
    expect(scheduleOf(new App({ context: { ANCHOR_INTERVAL_S: '600' } }), anchorer)).toBe('rate(10 minutes)');
    expect(scheduleOf(new App({ context: { ANCHOR_INTERVAL_S: 60 } }), anchorer)).toBe('rate(1 minute)');
    for (const bad of ['90', '30', 'often'])
      expect(() => scheduleOf(new App({ context: { ANCHOR_INTERVAL_S: bad } }), anchorer)).toThrow(/whole number of minutes/);
    // Other workers ignore the key.
    const watcher = workers.find((w) => w.fn === 'chain-event-watcher')!;
    if (watcher.kind === 'scheduled')
      expect(scheduleOf(new App({ context: { ANCHOR_INTERVAL_S: '600' } }), watcher)).toBe('rate(1 minute)');
  });

  test('table: PK/SK + GSI1 + GSI2, on demand, PITR, TTL; dev stage: no deletion protection, destroyed with the stack (prod: test/infra/stages.test.ts)', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: STAGES.dev.pitrRecoveryDays },
        DeletionProtectionEnabled: false,
        TimeToLiveSpecification: { AttributeName: 'expires_at_epoch', Enabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          Match.objectLike({ IndexName: 'GSI1', Projection: { ProjectionType: 'ALL' } }),
          Match.objectLike({ IndexName: 'GSI2', Projection: { ProjectionType: 'ALL' } }),
        ],
      }),
    });
    expect(ofType('AWS::DynamoDB::Table')).toHaveLength(1);
  });

  test("queues: encrypted, each with a DLQ, visibility ≥ 6 × consumer timeout; the ledger writer's two queues are FIFO", () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(Object.keys(QUEUES).sort()).toEqual([
      'dds-filing-queue',
      'evidence-pin-queue',
      'ledger-receipt-queue',
      'ledger-write-queue',
      'order-work-queue',
      'outbound-webhook-queue',
      'payout-request-queue',
    ]);
    expect(queues).toHaveLength(14);
    for (const [, q] of queues) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    const work = queues.filter(([, q]) => q.Properties.RedrivePolicy);
    expect(work).toHaveLength(7);
    for (const w of workers.filter((x): x is QueueConsumerDef => x.kind === 'queue-consumer')) {
      for (const name of queuesOf(w)) {
        const queue = stack.stateful.queues[name];
        const [, q] = work.find(([id]) => id === stack.getLogicalId(queue.node.defaultChild as CfnResource))!;
        // the single ledger writer retries a write until it lands (re-sending the same signed transaction)
        expect(q.Properties.RedrivePolicy.maxReceiveCount).toBe(QUEUES[name].maxReceiveCount);
        expect(q.Properties.FifoQueue ?? false).toBe(QUEUES[name].fifo);
        expect(q.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * w.timeoutSeconds);
      }
    }
    expect([QUEUES['ledger-write-queue'].fifo, QUEUES['ledger-receipt-queue'].fifo]).toEqual([true, true]);
    // enforceSSL on every queue
    expect(ofType('AWS::SQS::QueuePolicy')).toHaveLength(14);
  });

  test('registration and the payout reconciler use no queue; the ledger-write reconciler only sends to the ledger-write and evidence-pin queues', () => {
    const sqsActions = (fn: string) => {
      const roleId = stack.getLogicalId(stack.functions.get(fn)!.role.node.defaultChild as CfnResource);
      const [, policy] = ofType('AWS::IAM::Policy').find(([, p]) => p.Properties.Roles.some((r: Json) => r.Ref === roleId))!;
      return (policy.Properties.PolicyDocument.Statement as Json[])
        .flatMap((s) => [s.Action].flat() as string[])
        .filter((a) => a.startsWith('sqs:'));
    };
    const queueEnv = (fn: string) =>
      Object.keys(resources[fnLogicalId(fn)]!.Properties.Environment.Variables as Json).filter((k) => k.endsWith('_QUEUE_URL'));
    for (const fn of ['register-farmer', 'payout-reconciler', 'national-registry-check'])
      expect({ fn, sqs: sqsActions(fn), env: queueEnv(fn) }).toEqual({ fn, sqs: [], env: [] });
    expect(queueEnv('ledger-write-reconciler').sort()).toEqual(['EVIDENCE_PIN_QUEUE_URL', 'LEDGER_WRITE_QUEUE_URL']);
    expect(sqsActions('ledger-write-reconciler').length).toBeGreaterThan(0);
  });

  test('manual-review topic: SSE with the AWS managed key, managers filtered by cooperative', () => {
    // The ops topic of test/infra/observability.test.ts is in the nested stack Observability/Alarms, not in the main template.
    const managerTopics = Object.entries(mainResources).filter(([, r]) => r.Type === 'AWS::SNS::Topic');
    expect(managerTopics).toHaveLength(1);
    const [, topic] = managerTopics[0]!;
    expect(JSON.stringify(topic.Properties.KmsMasterKeyId)).toContain(':alias/aws/sns');
    for (const protocol of ['email', 'sms']) {
      template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: protocol,
        Endpoint: protocol === 'email' ? MANAGER.email : MANAGER.sms,
        FilterPolicy: { cooperative_id: [MANAGER.cooperativeId] },
      });
    }
  });

  test("one secret per secret the manifest's needs carry (signer key, provider credentials, webhook secrets, API keys and tokens); dev stage: deleted with the stack (prod retains them)", () => {
    const names = new Set(Object.values(NEEDS).flatMap((n) => n.secrets.map((x) => x.name)));
    expect(ofType('AWS::SecretsManager::Secret')).toHaveLength(names.size);
    for (const [, s] of ofType('AWS::SecretsManager::Secret')) expect(s.DeletionPolicy).toBe('Delete');
  });
});

describe('checks and configuration', () => {
  test('cdk-nag AwsSolutions: no unacknowledged findings; no error annotations', () => {
    const report = new AwsSolutionsChecks(app, { verbose: true }).validateScope(app);
    const findings = report.violations.map(
      (v) => `${v.ruleName} (${v.severity}) at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(findings).toEqual([]);
    // The main stack's annotations include those of its nested stacks (CDK collects them into the top-level stack's artifact).
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
  });

  test('cdk.json context defaults equal the code defaults', () => {
    for (const [key, value] of Object.entries(SETTING_DEFAULTS)) expect(cdkJson.context[key]).toEqual(value);
    expect(cdkJson.app).toContain('infra/app.ts');
  });

  test('esbuild options mirror the CDK bundling options', () => {
    const cdk = lambdaBundling();
    const plain = esbuildOptionsFor(functionEntry(AUTHORIZER_FN), '/tmp/out/index.mjs');
    expect(cdk.format).toBe(OutputFormat.ESM);
    expect(plain).toMatchObject({
      format: 'esm',
      target: cdk.target,
      platform: 'node',
      bundle: true,
      minify: cdk.minify,
      sourcemap: cdk.sourceMap,
      sourcesContent: cdk.sourcesContent,
      mainFields: cdk.mainFields,
      external: cdk.externalModules,
      banner: { js: BUNDLE_BANNER },
    });
    expect(cdk.forceDockerBundling).toBe(false);
    expect(plain.entryPoints).toEqual([functionEntry(AUTHORIZER_FN)]);
  });

  test('missing handlers fail the synth with one error naming each of them', () => {
    const saved = process.env.FUNCTIONS_ROOT;
    process.env.FUNCTIONS_ROOT = 'test/infra'; // inside the repo, holds no handlers
    try {
      expect(() => new CoffeeTraceStack(new App(), 'NoHandlers')).toThrow(
        /missing Lambda handlers .*functions\/authorizer\/handler\.ts.*functions\/submit-batch\/handler\.ts/,
      );
    } finally {
      if (saved === undefined) delete process.env.FUNCTIONS_ROOT;
      else process.env.FUNCTIONS_ROOT = saved;
    }
  });
});
