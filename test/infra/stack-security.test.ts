import type { CfnResource } from 'aws-cdk-lib';
import { PER_TOKEN_RPS, PUBLIC_PER_IP_RPS, STAGE_TO_TOKEN_RATIO, WEBHOOK_PER_IP_RPS } from '../../infra/stack/rate-limits';
import {
  PER_TOKEN_LIMIT,
  PUBLIC_PER_IP_LIMIT,
  publicPathRegex,
  rateLimitedBody,
  WEBHOOK_PATH_REGEX,
  WEBHOOK_PER_IP_LIMIT,
} from '../../infra/stack/waf';
import { functionManifest, routes } from '../../shared/manifest';

import { type Json, fnLogicalId, ofType, resources, stack, synthesizeStack } from './stack-fixture';

jest.setTimeout(240_000);

beforeAll(synthesizeStack);

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
