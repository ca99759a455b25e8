/**
 * Template assertions on CoffeeTraceStack, synthesized once (bundling 21 functions takes a while).
 * The app gets cdk.json's context (feature flags and setting defaults), so it is the template
 * `npm run synth` produces, plus one manager subscription.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
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
import { CoffeeTraceStack, functionSpecs, MAIN_TEMPLATE_RESOURCE_CEILING, scheduleOf } from '../../infra/stack/coffee-trace-stack';
import { GATEWAY_ERRORS, STAGE_NAME } from '../../infra/stack/http-api';
import { deletablePartitions, TABLE_DENIED_ACTIONS } from '../../infra/stack/needs';
import { aslPlaceholders, payoutAslPath } from '../../infra/stack/payout-state-machine';
import { SETTING_DEFAULTS } from '../../infra/stack/settings';
import { STAGES } from '../../infra/stack/stage';
import { PER_TOKEN_RPS, PUBLIC_PER_IP_RPS, STAGE_TO_TOKEN_RATIO, THROTTLE, WEBHOOK_PER_IP_RPS } from '../../infra/stack/rate-limits';
import {
  PER_TOKEN_LIMIT,
  PUBLIC_PER_IP_LIMIT,
  publicPathRegex,
  rateLimitedBody,
  WEBHOOK_PATH_REGEX,
  WEBHOOK_PER_IP_LIMIT,
} from '../../infra/stack/waf';
import { AUTHORIZER_FN, COMMON_ENV, functionManifest, NEEDS, QUEUES, routes, workers, type QueueConsumerDef } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { nestedTemplate, type NestedTemplate } from './nested-templates';

jest.setTimeout(240_000);

type Json = Record<string, any>;

const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { app: string; context: Json };
const MANAGER = { cooperativeId: 'COOP-KAWA', email: 'manager@kawa.example', sms: '+256700123456' };

let app: App;
let stack: CoffeeTraceStack;
let template: Template;
let resources: Record<string, Json>;
/** The nested stack `Triggers`: the routes' invoke permissions and the schedules. */
let triggers: NestedTemplate;

/** Logical id of a function folder's Lambda. */
function fnLogicalId(fn: string): string {
  const f = stack.functions.get(fn);
  if (!f) throw new Error(`no function ${fn}`);
  return stack.getLogicalId(f.fn.node.defaultChild as CfnResource);
}

function ofType(type: string): [string, Json][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** `/a/{id}` path of an AWS::ApiGateway::Resource (or the root GetAtt). */
function resourcePath(ref: Json): string {
  if (ref['Fn::GetAtt']) return '';
  const r = resources[ref.Ref as string]!;
  return `${resourcePath(r.Properties.ParentId)}/${r.Properties.PathPart}`;
}

beforeAll(() => {
  const started = Date.now();
  app = new App({ context: { ...cdkJson.context, managerSubscriptions: [MANAGER] } });
  stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Json>;
  triggers = nestedTemplate(stack.triggers);
  console.log(`CoffeeTraceStack synthesized in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

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
    const fromApi = Object.values(triggers.resources).filter(
      (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties.Principal === 'apigateway.amazonaws.com',
    );
    expect(fromApi).toHaveLength(routes.length);
    const granted = fromApi.map((r) => {
      expect(r.Properties.Action).toBe('lambda:InvokeFunction');
      const [head, tail] = (r.Properties.SourceArn['Fn::Join'][1] as unknown[]).slice(-2) as [Json, string];
      expect(triggers.resolve(head)).toEqual({ Ref: apiId });
      const fn = (triggers.resolve(r.Properties.FunctionName) as Json)['Fn::GetAtt'];
      return `${fn[0]} ${fn[1]} ${tail}`;
    });
    // methodArn: stage, method, path with every path parameter as *
    const expected = routes.map((r) => `${fnLogicalId(r.fn)} Arn /${STAGE_NAME}/${r.method}${r.path.replace(/\{[^}]*\}/g, '*')}`);
    expect(granted.sort()).toEqual(expected.sort());
    const inMain = ofType('AWS::Lambda::Permission').filter(([, r]) => r.Properties.Principal === 'apigateway.amazonaws.com');
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

describe('WAF rate limits (docs/api/conventions.md#http-and-errors)', () => {
  const acl = () => {
    const acls = ofType('AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    return acls[0]!;
  };
  const rule = (name: string) => (acl()[1].Properties.Rules as Json[]).find((r) => r.Name === name)!;
  const webhookScope = {
    RegexMatchStatement: {
      FieldToMatch: { UriPath: {} },
      RegexString: WEBHOOK_PATH_REGEX,
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    },
  };
  const block429 = {
    Block: {
      CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'RateLimited', ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }] },
    },
  };

  test('a REGIONAL web ACL, allow by default, associated with the API stage', () => {
    const [aclId, a] = acl();
    expect(a.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const associations = ofType('AWS::WAFv2::WebACLAssociation');
    expect(associations).toHaveLength(1);
    const [, assoc] = associations[0]!;
    expect(assoc.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const [stageId] = ofType('AWS::ApiGateway::Stage')[0]!;
    const [apiId] = ofType('AWS::ApiGateway::RestApi')[0]!;
    const arn = JSON.stringify(assoc.Properties.ResourceArn);
    expect(arn).toContain(':apigateway:');
    expect(arn).toContain(`{"Ref":"${apiId}"},"/stages/",{"Ref":"${stageId}"}`);
  });

  test('per token: the whitespace-normalised Authorization header as custom key, 3,000 per 60 s, every route but the webhooks, 429', () => {
    const r = rule('PerToken');
    expect(PER_TOKEN_LIMIT).toBe(3000);
    expect(r.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [{ Header: { Name: 'Authorization', TextTransformations: [{ Priority: 0, Type: 'COMPRESS_WHITE_SPACE' }] } }],
      EvaluationWindowSec: 60,
      Limit: 3000,
      ScopeDownStatement: { NotStatement: { Statement: webhookScope } },
    });
    expect(r.Action).toEqual(block429);
    expect(r.VisibilityConfig).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
  });

  test('the stage throttle is at least 4× the per-token rate, both read from the synthesized template', () => {
    const [, stage] = ofType('AWS::ApiGateway::Stage')[0]!;
    const stageRps = (stage.Properties.MethodSettings as Json[])[0]!.ThrottlingRateLimit as number;
    const perToken = rule('PerToken').Statement.RateBasedStatement;
    const perTokenRps = perToken.Limit / perToken.EvaluationWindowSec;
    expect(perTokenRps).toBe(PER_TOKEN_RPS);
    expect(stageRps).toBe(STAGE_TO_TOKEN_RATIO * PER_TOKEN_RPS);
    expect(STAGE_TO_TOKEN_RATIO).toBeGreaterThanOrEqual(4);
    expect(stageRps).toBeGreaterThanOrEqual(4 * perTokenRps);
    // Each per-IP rule also leaves room for others: below the stage's sustained rate.
    for (const name of ['PublicPerIp', 'WebhookPerIp']) {
      const { Limit, EvaluationWindowSec } = rule(name).Statement.RateBasedStatement;
      expect(Limit / EvaluationWindowSec).toBeLessThan(stageRps);
    }
    expect(PUBLIC_PER_IP_LIMIT / 60).toBe(PUBLIC_PER_IP_RPS);
    expect(WEBHOOK_PER_IP_LIMIT / 60).toBe(WEBHOOK_PER_IP_RPS);
  });

  test('public routes: per source IP on exactly the unauthenticated non-webhook routes (/trace, /ipfs, /docs, /openapi.json), 429', () => {
    const r = rule('PublicPerIp');
    expect(r.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 60,
      Limit: PUBLIC_PER_IP_LIMIT,
      ScopeDownStatement: {
        RegexMatchStatement: {
          FieldToMatch: { UriPath: {} },
          RegexString: publicPathRegex(),
          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
        },
      },
    });
    expect(r.Action).toEqual(block429);
    const regex = r.Statement.RateBasedStatement.ScopeDownStatement.RegexMatchStatement.RegexString as string;
    expect(regex.length).toBeLessThanOrEqual(512); // WAF's limit on a regex string
    const re = new RegExp(regex);
    const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'bafy123');
    for (const route of routes) {
      for (const path of [concrete(route.path), `/prod${concrete(route.path)}`]) {
        expect({ path, perIp: re.test(path) }).toEqual({ path, perIp: route.auth === 'public' });
      }
    }
    for (const path of ['/prod/trace/B-1', '/prod/trace/B-1/qr.svg', '/ipfs/bafy/evidence.json', '/docs', '/prod/openapi.json'])
      expect(re.test(path)).toBe(true);
    for (const path of ['/prod/openapiXjson', '/prod/trace', '/prod/loans/L-1', '/prod/api/webhooks/onramp'])
      expect(re.test(path)).toBe(false);
  });

  test('webhook routes: per source IP on /api/webhooks/*, 429', () => {
    const r = rule('WebhookPerIp');
    expect(r.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 60,
      Limit: WEBHOOK_PER_IP_LIMIT,
      ScopeDownStatement: webhookScope,
    });
    expect(r.Action).toEqual(block429);
    const re = new RegExp(WEBHOOK_PATH_REGEX);
    for (const route of routes) {
      for (const path of [route.path, `/prod${route.path}`])
        expect({ path, webhook: re.test(path) }).toEqual({ path, webhook: route.auth === 'webhook' });
    }
  });

  test('the 429 body is the RATE_LIMITED error envelope with its docs link', () => {
    const body = acl()[1].Properties.CustomResponseBodies.RateLimited;
    expect(body.ContentType).toBe('APPLICATION_JSON');
    // Resolve the docs-base token to a URL, then the body must be the envelope.
    const parts = body.Content['Fn::Join'][1] as unknown[];
    const text = parts.map((p) => (typeof p === 'string' ? p : 'https://api.example.com/docs')).join('');
    expect(text).toBe(rateLimitedBody('https://api.example.com/docs'));
    const parsed = JSON.parse(text) as Json;
    expect(parsed).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringContaining('Retry-After'),
        docs: 'https://api.example.com/docs/errors#RATE_LIMITED',
      },
    });
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
      // Layers: Powertools (first, on every function), the extension on functions that read secrets, and a function's static files (FUNCTION_LAYER_FILES).
      expect((props.Layers ?? []).length).toBe(1 + (readsSecrets ? 1 : 0) + (FUNCTION_LAYER_FILES[m.fn] ? 1 : 0));
      expect(props.Layers[0]).toEqual({ Ref: powertoolsParameterId() });
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

  test("queue consumers: one SQS event source each, from the manifest's queue with its batch size, partial batch failures", () => {
    const consumers = workers.filter((x): x is QueueConsumerDef => x.kind === 'queue-consumer');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, x]) => !x.Properties.EventSourceArn['Fn::GetAtt']?.includes('StreamArn'),
    );
    expect(mappings).toHaveLength(consumers.length);
    for (const w of consumers) {
      const queueId = stack.getLogicalId(stack.stateful.queues[w.queue].node.defaultChild as CfnResource);
      const [, mapping] = mappings.find(([, x]) => x.Properties.FunctionName.Ref === fnLogicalId(w.fn))!;
      expect({ fn: w.fn, batchSize: mapping.Properties.BatchSize }).toEqual({ fn: w.fn, batchSize: w.batchSize });
      expect(mapping.Properties.EventSourceArn).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    }
  });

  test("table-stream consumers (outbound webhooks): the table's stream, filtered to the manifest's entities, bisected and retried, then to the outbound DLQ", () => {
    const streamConsumers = workers.filter((x) => x.kind === 'table-stream-consumer');
    expect(streamConsumers.map((w) => w.fn)).toEqual(['outbound-event-publisher']);
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
    const rules = Object.entries(triggers.resources).filter(([, r]) => r.Type === 'AWS::Events::Rule');
    expect(rules).toHaveLength(scheduled.length);
    expect(ofType('AWS::Events::Rule')).toEqual([]);
    for (const w of scheduled) {
      const target = { 'Fn::GetAtt': [fnLogicalId(w.fn), 'Arn'] };
      const rule = rules.find(([, r]) =>
        (r.Properties.Targets as Json[]).some((t) => JSON.stringify(triggers.resolve(t.Arn)) === JSON.stringify(target)),
      );
      expect(rule).toBeDefined();
      expect(rule![1].Properties.ScheduleExpression).toBe(w.schedule);
      const permission = Object.values(triggers.resources).find(
        (r) =>
          r.Type === 'AWS::Lambda::Permission' &&
          r.Properties.Principal === 'events.amazonaws.com' &&
          JSON.stringify(r.Properties.SourceArn) === JSON.stringify({ 'Fn::GetAtt': [rule![0], 'Arn'] }),
      );
      expect(permission && triggers.resolve(permission.Properties.FunctionName)).toEqual(target);
    }
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

  test('queues: encrypted, each with a DLQ, visibility ≥ 6 × consumer timeout; the ledger-write queue is FIFO', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(Object.keys(QUEUES).sort()).toEqual([
      'dds-filing-queue',
      'evidence-pin-queue',
      'ledger-write-queue',
      'outbound-webhook-queue',
      'payout-request-queue',
    ]);
    expect(queues).toHaveLength(10);
    for (const [, q] of queues) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    const work = queues.filter(([, q]) => q.Properties.RedrivePolicy);
    expect(work).toHaveLength(5);
    for (const w of workers.filter((x) => x.kind === 'queue-consumer')) {
      const queue = stack.stateful.queues[w.queue!];
      const [, q] = work.find(([id]) => id === stack.getLogicalId(queue.node.defaultChild as CfnResource))!;
      // the single ledger writer retries a write until it lands (re-sending the same signed transaction)
      expect(q.Properties.RedrivePolicy.maxReceiveCount).toBe(QUEUES[w.queue!].maxReceiveCount);
      expect(q.Properties.FifoQueue ?? false).toBe(QUEUES[w.queue!].fifo);
      expect(q.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * w.timeoutSeconds);
    }
    // enforceSSL on every queue
    expect(ofType('AWS::SQS::QueuePolicy')).toHaveLength(10);
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
    // The ops topic of test/infra/observability.test.ts is in the nested stack Observability/Alarms; the filter keeps it out should it come back.
    const managerTopics = ofType('AWS::SNS::Topic').filter(([id]) => !id.startsWith('Observability'));
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

describe('KMS keys: the ledger signer and the outbound webhook secrets', () => {
  /** Every Allow statement of a function's policy, with the function's name. */
  const allowsOf = () =>
    functionManifest().map((m) => {
      const roleId = stack.getLogicalId(stack.functions.get(m.fn)!.role.node.defaultChild as CfnResource);
      const policy = ofType('AWS::IAM::Policy').find(([, p]) => p.Properties.Roles.some((r: Json) => r.Ref === roleId));
      const statements = ((policy?.[1].Properties.PolicyDocument.Statement ?? []) as Json[]).filter((x) => x.Effect === 'Allow');
      return { fn: m.fn, statements };
    });
  const keyId = (key: { node: { defaultChild?: unknown } }) => stack.getLogicalId(key.node.defaultChild as CfnResource);
  const grants = (statements: Json[], action: string, key: string) =>
    statements.filter((x) => ([x.Action].flat() as string[]).includes(action) && JSON.stringify(x.Resource).includes(key));
  const anyKms = (statements: Json[], action: string) =>
    statements.some((x) => ([x.Action].flat() as string[]).some((a) => a === action || a === 'kms:*'));

  test('the ledger signer is a secp256k1 SIGN_VERIFY key; only the ledger writer may kms:Sign (and GetPublicKey) with it', () => {
    const signer = keyId(stack.stateful.ledgerSignerKmsKey);
    expect(resources[signer]).toMatchObject({ Type: 'AWS::KMS::Key', Properties: { KeySpec: 'ECC_SECG_P256K1', KeyUsage: 'SIGN_VERIFY' } });
    const signers = allowsOf()
      .filter((f) => anyKms(f.statements, 'kms:Sign'))
      .map((f) => f.fn);
    expect(signers).toEqual(['ledger-writer']);
    const writer = allowsOf().find((f) => f.fn === 'ledger-writer')!;
    expect(grants(writer.statements, 'kms:Sign', signer)).toHaveLength(1);
    expect(grants(writer.statements, 'kms:GetPublicKey', signer)).toHaveLength(1);
    // No function has kms:Sign through the key policy either: it trusts the account root only (IAM decides).
    const keyPolicy = JSON.stringify(resources[signer]!.Properties.KeyPolicy);
    expect(keyPolicy).not.toContain('kms:Sign');
    // The ledger writer gets the key id, and no Secrets Manager private key exists any more.
    const env = resources[fnLogicalId('ledger-writer')]!.Properties.Environment.Variables as Json;
    expect(env.LEDGER_SIGNER_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [signer, 'Arn'] });
    expect(env.LEDGER_SIGNER_KEY_SECRET_ARN).toBeUndefined();
  });

  test('outbound secrets: a rotated symmetric key; create and rotate may only generate data keys, only the sender may decrypt, both bound to the endpoint_id context', () => {
    const key = keyId(stack.stateful.outboundSecretsKey);
    expect(resources[key]).toMatchObject({ Type: 'AWS::KMS::Key', Properties: { EnableKeyRotation: true } });
    const all = allowsOf();
    const decrypters = all.filter((f) => grants(f.statements, 'kms:Decrypt', key).length).map((f) => f.fn);
    expect(decrypters).toEqual(['outbound-webhook-sender']);
    const sealers = all
      .filter((f) => grants(f.statements, 'kms:GenerateDataKey', key).length)
      .map((f) => f.fn)
      .sort();
    expect(sealers).toEqual(['create-webhook-endpoint', 'outbound-webhook-sender', 'rotate-webhook-secret']);
    for (const f of all) {
      for (const st of [...grants(f.statements, 'kms:Decrypt', key), ...grants(f.statements, 'kms:GenerateDataKey', key)]) {
        expect(st.Condition).toEqual({
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['endpoint_id'] },
          Null: { 'kms:EncryptionContext:endpoint_id': 'false' },
        });
      }
      if (!decrypters.includes(f.fn))
        expect(anyKms(f.statements, 'kms:Decrypt') && grants(f.statements, 'kms:Decrypt', key).length > 0).toBe(false);
    }
    for (const fn of ['create-webhook-endpoint', 'rotate-webhook-secret', 'outbound-webhook-sender']) {
      expect(resources[fnLogicalId(fn)]!.Properties.Environment.Variables.OUTBOUND_SECRET_KMS_KEY_ID).toEqual({
        'Fn::GetAtt': [key, 'Arn'],
      });
    }
    expect(resources[fnLogicalId('list-webhook-endpoints')]!.Properties.Environment.Variables.OUTBOUND_SECRET_KMS_KEY_ID).toBeUndefined();
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

  test(`the main template holds at most ${MAIN_TEMPLATE_RESOURCE_CEILING} resources (CloudFormation's limit is 500); so does each nested stack`, () => {
    // 456 while GET /purchase-orders/{id} waits for the split of the functions into nested stacks by area.
    expect(MAIN_TEMPLATE_RESOURCE_CEILING).toBeLessThanOrEqual(456);
    expect(Object.keys(resources).length).toBeLessThanOrEqual(MAIN_TEMPLATE_RESOURCE_CEILING);
    const nested = ofType('AWS::CloudFormation::Stack');
    expect(nested).toHaveLength(2);
    for (const n of [triggers, nestedTemplate(stack.observability.nested)])
      expect(Object.keys(n.resources).length).toBeLessThanOrEqual(MAIN_TEMPLATE_RESOURCE_CEILING);
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
