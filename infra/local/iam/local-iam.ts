/**
 * The local stack's IAM enforcement, set up in one call (docs/local-iam.md): the role policies of
 * the synthesized template (infra/tools/iam/role-policies.ts, cached by ./policy-cache.ts), resolved to the local resources, and an
 * {@link IamEnforcer} wrapping the SDK clients' `send` and `fetch`.
 *
 * Settings (environment):
 * - `LOCAL_IAM_ENFORCE` (default `true`): `false` turns enforcement off.
 * - `LOCAL_IAM_DECISIONS_FILE=<path>`: every evaluated request appended as one JSON line
 *   `{"fn","action","resource","allowed"}`.
 * - `LOCAL_IAM_KNOWN_REFUSALS` (tests): a JSON array of {@link KnownRefusal}s let through.
 */
import { DescribeTableCommand, DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import { SFNClient, SFNServiceException } from '@aws-sdk/client-sfn';
import { SNSClient, SNSServiceException } from '@aws-sdk/client-sns';
import { SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { IamEnforcer, type KnownRefusal, type ServiceExceptionClass } from './enforcer';
import { localArns, resolvePolicies, type LocalResources } from '../../tools/iam/role-policies';
import { loadRolePolicies } from './policy-cache';

/** `LOCAL_IAM_ENFORCE`: on unless `false` (or `0`, `off`, `no`). @throws Error for any other value. */
export function localIamEnforced(value = process.env.LOCAL_IAM_ENFORCE): boolean {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'true' || v === '1' || v === 'on' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'off' || v === 'no') return false;
  throw new Error(`LOCAL_IAM_ENFORCE must be true or false, not ${JSON.stringify(value)}`);
}

/** `LOCAL_IAM_KNOWN_REFUSALS` parsed. @throws Error when it is not a JSON array of {fn, action, why}. */
function knownRefusalsFrom(value = process.env.LOCAL_IAM_KNOWN_REFUSALS): KnownRefusal[] {
  if (!value?.trim()) return [];
  const list = JSON.parse(value) as KnownRefusal[];
  if (
    !Array.isArray(list) ||
    list.some((k) => !k || typeof k.fn !== 'string' || typeof k.action !== 'string' || typeof k.why !== 'string')
  ) {
    throw new Error('LOCAL_IAM_KNOWN_REFUSALS must be a JSON array of {"fn","action","resource"?,"leadingKey"?,"why"}');
  }
  return list;
}

export interface LocalIamTargets extends Omit<LocalResources, 'functionArn'> {
  functionArn(fn: string): string;
  dynamoEndpoint: string;
  /** Local queue URL → manifest queue name. */
  queueUrls: Record<string, string>;
  smsStandInTopicArn: string;
  s3Endpoint: string;
  log: (line: string) => void;
}

/**
 * Loads (or synthesizes) the role policies, resolves them to `t`, and instruments the SDK clients
 * and `fetch`. Returns the enforcer, whose `wrap(fn, handler)` every handler must go through.
 */
export async function startLocalIam(t: LocalIamTargets): Promise<IamEnforcer> {
  const started = Date.now();
  const template = await loadRolePolicies((ms) =>
    t.log(`IAM: synthesized the CDK stack for its role policies in ${(ms / 1000).toFixed(1)} s (cached under .local/iam/)`),
  );
  const policies = resolvePolicies(template.functions, localArns(template.counterparts, template.stateMachineName, t));
  const ddb = new DynamoDBClient({ endpoint: t.dynamoEndpoint });
  const table = (await ddb.send(new DescribeTableCommand({ TableName: t.tableName }))).Table!;
  ddb.destroy();
  const hash = (ks?: Array<{ AttributeName?: string; KeyType?: string }>) => ks?.find((k) => k.KeyType === 'HASH')?.AttributeName ?? '';
  const enforcer = new IamEnforcer({
    policies,
    region: t.region,
    account: t.account,
    log: t.log,
    decisionsFile: process.env.LOCAL_IAM_DECISIONS_FILE || undefined,
    knownRefusals: knownRefusalsFrom(),
    dynamoKeys: {
      [t.tableName]: {
        partitionKey: hash(table.KeySchema),
        indexes: Object.fromEntries((table.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName!, hash(i.KeySchema)])),
      },
    },
    queueArnOf: (url) => {
      const q = t.queueUrls[url];
      const arn = q
        ? t.queues[q]?.arn
        : (Object.values(t.queues).find((x) => x.arn.endsWith(`:${url.split('/').pop()}`))?.arn ??
          Object.values(t.queues).find((x) => x.dlqArn.endsWith(`:${url.split('/').pop()}`))?.dlqArn);
      return arn ?? `arn:aws:sqs:${t.region}:${t.account}:${url.split('/').pop()}`;
    },
    smsStandInTopicArn: t.smsStandInTopicArn,
    stateMachineArn: t.stateMachineArn,
    s3Origin: new URL(t.s3Endpoint).origin,
  });
  const exceptions: Record<string, ServiceExceptionClass> = {
    DynamoDB: DynamoDBServiceException as never,
    SQS: SQSServiceException as never,
    SNS: SNSServiceException as never,
    SFN: SFNServiceException as never,
    KMS: KMSServiceException as never,
  };
  enforcer.instrument(
    [DynamoDBClient, SQSClient, SNSClient, SFNClient, KMSClient].map((c) => Object.getPrototypeOf(c.prototype) as object),
    exceptions,
  );
  enforcer.instrumentFetch();
  t.log(`IAM: enforcing the roles of ${Object.keys(policies).length} functions (ready in ${Date.now() - started} ms)`);
  return enforcer;
}
