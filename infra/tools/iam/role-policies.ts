/**
 * Each function's identity policies, as plain IAM JSON, from the synthesized template (flattened
 * with its nested stacks: ../stack-templates.ts): the inline `Policies` of its role and every
 * `AWS::IAM::Policy` attached to that role. The one reader of role policies, for:
 * - the IAM tests and `npm run iam-report` ({@link rolePolicies}): intrinsics resolved to made-up
 *   but well-formed ARNs in one test account and region (testArns, {@link TEST_ACCOUNT});
 * - the local stack's IAM enforcement (infra/local/iam/; docs/local-iam.md): {@link
 *   extractRolePolicies} (cached unresolved by infra/local/iam/policy-cache.ts), then {@link
 *   resolvePolicies} with {@link localArns}, the ARNs of the local resources.
 * The two differ only in the {@link ArnResolver} that says what a `Ref` or `Fn::GetAtt` stands for.
 */
import type { CfnResource } from 'aws-cdk-lib';
import type { ServiceFunction } from '../../stack/service-function';

/** A JSON IAM policy document. */
export interface PolicyDocument {
  Version?: string;
  Statement: PolicyStatementJson[];
}

/** One statement, as IAM JSON (the simulator reads it as it is). */
type PolicyStatementJson = Record<string, unknown> & { Effect: 'Allow' | 'Deny' };

/** A named identity policy of a role. */
export interface NamedPolicy {
  name: string;
  policy: PolicyDocument;
}

export const TEST_ACCOUNT = '111122223333';
const TEST_REGION = 'eu-west-1';

// biome-ignore lint/suspicious/noExplicitAny: a synthesized CloudFormation template is read loosely; every field used is checked where it is read
type Json = Record<string, any>;

/** What `Ref` and `Fn::GetAtt` of a logical id resolve to. */
export interface ResolvedResource {
  /** `Ref`. */
  ref: string;
  /** `Fn::GetAtt` attributes (at least `Arn` for resources that have one). */
  attributes: Record<string, string>;
}

/**
 * How intrinsics resolve: pseudo parameters, `Ref` of a logical id or template parameter,
 * `Fn::GetAtt`, and an optional rewrite of every resolved string (e.g. an ARN formatted in the
 * template that has another name locally). Each function throws on a name it does not know.
 */
export interface ArnResolver {
  pseudo: Record<string, string>;
  ref(name: string): string;
  getAtt(id: string, attr: string): string;
  finish?(s: string): string;
}

/**
 * A function folder → its role's logical id in the template of the stack it is in (a nested
 * stack's, for the functions of an area), for each function of `functions`.
 */
export function functionRoles(functions: ReadonlyMap<string, ServiceFunction>): Record<string, string> {
  return Object.fromEntries([...functions].map(([fn, f]) => [fn, f.role.stack.getLogicalId(f.role.node.defaultChild as CfnResource)]));
}

/**
 * The identity policies of each role in `roles` (name → role logical id), intrinsics unresolved:
 * the role's inline `Policies` (named `<role id>/<policy name>`) and every `AWS::IAM::Policy` whose
 * `Roles` holds a `Ref` to it (named by its logical id).
 * @throws Error when a role is missing or has managed policies (their documents are not in the
 *   template, so nothing could evaluate them).
 */
export function extractRolePolicies(template: Json, roles: Record<string, string>): Record<string, NamedPolicy[]> {
  const all = Object.entries((template.Resources ?? {}) as Record<string, Json>);
  const out: Record<string, NamedPolicy[]> = {};
  for (const [name, roleId] of Object.entries(roles)) {
    const role = template.Resources?.[roleId] as Json | undefined;
    if (role?.Type !== 'AWS::IAM::Role') throw new Error(`rolePolicies: ${roleId} (${name}) is not a role of the template`);
    if ((role.Properties?.ManagedPolicyArns as unknown[] | undefined)?.length)
      throw new Error(`rolePolicies: role ${roleId} (${name}) has managed policies, whose documents are not in the template`);
    const policies: NamedPolicy[] = [];
    for (const p of (role.Properties?.Policies ?? []) as Json[])
      policies.push({ name: `${roleId}/${p.PolicyName}`, policy: p.PolicyDocument });
    for (const [id, r] of all) {
      if (r.Type !== 'AWS::IAM::Policy' && r.Type !== 'AWS::IAM::ManagedPolicy') continue;
      if (!((r.Properties?.Roles ?? []) as Json[]).some((x) => x?.Ref === roleId)) continue;
      policies.push({ name: id, policy: r.Properties.PolicyDocument });
    }
    out[name] = policies;
  }
  return out;
}

/**
 * `value` with every CloudFormation intrinsic resolved by `r` (`Ref`, `Fn::GetAtt`, `Fn::Join`,
 * `Fn::Sub`, `Fn::Select`, `Fn::Split`). @throws Error on an intrinsic it cannot resolve (so a
 * policy with a hole in it is never evaluated).
 */
function resolveIntrinsics(value: unknown, r: ArnResolver): unknown {
  const finish = (s: string) => (r.finish ? r.finish(s) : s);
  const ref = (name: string): string => r.pseudo[name] ?? r.ref(name);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'string') return finish(v);
    if (!v || typeof v !== 'object') return v;
    const o = v as Json;
    const keys = Object.keys(o);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) {
      const k = keys[0]!;
      const arg = o[k];
      switch (k) {
        case 'Ref':
          return ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attr] = Array.isArray(arg) ? arg : String(arg).split(/\.(.+)/);
          return r.getAtt(id, attr);
        }
        case 'Fn::Join':
          return finish((walk(arg[1]) as unknown[]).map(String).join(arg[0]));
        case 'Fn::Select':
          return (walk(arg[1]) as unknown[])[Number(walk(arg[0]))];
        case 'Fn::Split':
          return String(walk(arg[1])).split(arg[0]);
        case 'Fn::Sub': {
          const [text, vars] = Array.isArray(arg) ? [arg[0] as string, walk(arg[1]) as Record<string, string>] : [arg as string, {}];
          return finish(
            text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
              if (vars[name] !== undefined) return String(vars[name]);
              const dot = name.indexOf('.');
              return dot > 0 && !name.startsWith('AWS::') ? r.getAtt(name.slice(0, dot), name.slice(dot + 1)) : ref(name);
            }),
          );
        }
        default:
          throw new Error(`resolveIntrinsics: ${k} is not supported`);
      }
    }
    return Object.fromEntries(keys.map((key) => [key, walk(o[key])]));
  };
  return walk(value);
}

/** Every policy of {@link extractRolePolicies}' result resolved by `r`. */
export function resolvePolicies(policies: Record<string, NamedPolicy[]>, r: ArnResolver): Record<string, NamedPolicy[]> {
  return Object.fromEntries(
    Object.entries(policies).map(([fn, ps]) => [
      fn,
      ps.map((p) => ({ name: p.name, policy: resolveIntrinsics(p.policy, r) as PolicyDocument })),
    ]),
  );
}

/**
 * A made-up but well-formed identity for every resource of `template`: its `Ref` and `Arn` as
 * AWS would give them for its type, named after its logical id (S3 bucket names lower-cased).
 * `overrides` replaces any of them (e.g. to match names used elsewhere in a test).
 */
export function resolveTemplate(
  template: Json,
  overrides: Record<string, Partial<ResolvedResource>> = {},
): Record<string, ResolvedResource> {
  const out: Record<string, ResolvedResource> = {};
  const r = TEST_REGION;
  const a = TEST_ACCOUNT;
  for (const [id, res] of Object.entries((template.Resources ?? {}) as Record<string, Json>)) {
    const name = id;
    let ref = name; // most resources: Ref is the physical name
    let arn = `arn:aws:cloudformation:${r}:${a}:resource/${name}`;
    const attributes: Record<string, string> = {};
    switch (res.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        arn = `arn:aws:dynamodb:${r}:${a}:table/${name}`;
        attributes.StreamArn = `${arn}/stream/2026-01-01T00:00:00.000`;
        break;
      case 'AWS::S3::Bucket': {
        ref = name.toLowerCase();
        arn = `arn:aws:s3:::${ref}`;
        attributes.DomainName = `${ref}.s3.amazonaws.com`;
        attributes.RegionalDomainName = `${ref}.s3.${r}.amazonaws.com`;
        break;
      }
      case 'AWS::SQS::Queue':
        arn = `arn:aws:sqs:${r}:${a}:${name}`;
        ref = `https://sqs.${r}.amazonaws.com/${a}/${name}`;
        attributes.QueueName = name;
        attributes.QueueUrl = ref;
        break;
      case 'AWS::SNS::Topic':
        arn = `arn:aws:sns:${r}:${a}:${name}`;
        ref = arn;
        attributes.TopicArn = arn;
        break;
      case 'AWS::KMS::Key':
        ref = `key-${name}`; // a key id (AWS: a UUID)
        arn = `arn:aws:kms:${r}:${a}:key/${ref}`;
        attributes.KeyId = ref;
        break;
      case 'AWS::SecretsManager::Secret':
        arn = `arn:aws:secretsmanager:${r}:${a}:secret:${name}-AbCdEf`;
        ref = arn;
        break;
      case 'AWS::StepFunctions::StateMachine':
        arn = `arn:aws:states:${r}:${a}:stateMachine:${name}`;
        ref = arn;
        attributes.Name = name;
        break;
      case 'AWS::Lambda::Function':
        arn = `arn:aws:lambda:${r}:${a}:function:${name}`;
        break;
      case 'AWS::IAM::Role':
        arn = `arn:aws:iam::${a}:role/${name}`;
        attributes.RoleId = `AROA${name.slice(0, 16).toUpperCase()}`;
        break;
      case 'AWS::Logs::LogGroup':
        arn = `arn:aws:logs:${r}:${a}:log-group:${name}:*`;
        break;
      case 'AWS::CloudFormation::Stack':
        arn = `arn:aws:cloudformation:${r}:${a}:stack/${name}/0`;
        break;
      default:
        break;
    }
    attributes.Arn = arn;
    const o = overrides[id];
    out[id] = { ref: o?.ref ?? ref, attributes: { ...attributes, ...(o?.attributes ?? {}) } };
  }
  return out;
}

/**
 * Test ARNs: resources as {@link resolveTemplate} names them (or `resources` given), template
 * parameters by their `Default` unless given in `parameters`, pseudo parameters of the test
 * account and region and a stack named CoffeeTrace.
 */
function testArns(
  template: Json,
  opts: { resources?: Record<string, ResolvedResource>; parameters?: Record<string, string> } = {},
): ArnResolver {
  const resources = opts.resources ?? resolveTemplate(template);
  const parameters: Record<string, string> = {};
  for (const [name, p] of Object.entries((template.Parameters ?? {}) as Record<string, Json>))
    if (p.Default !== undefined) parameters[name] = String(p.Default);
  Object.assign(parameters, opts.parameters ?? {});
  return {
    pseudo: {
      'AWS::Region': TEST_REGION,
      'AWS::AccountId': TEST_ACCOUNT,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': 'CoffeeTrace',
      'AWS::StackId': `arn:aws:cloudformation:${TEST_REGION}:${TEST_ACCOUNT}:stack/CoffeeTrace/0`,
    },
    ref(name) {
      if (resources[name]) return resources[name]!.ref;
      if (parameters[name] !== undefined) return parameters[name]!;
      throw new Error(`resolveIntrinsics: cannot resolve Ref ${name}`);
    },
    getAtt(id, attr) {
      const v = resources[id]?.attributes[attr];
      if (v === undefined) throw new Error(`resolveIntrinsics: cannot resolve Fn::GetAtt ${id}.${attr}`);
      return v;
    },
  };
}

/**
 * The identity policies of each role in `roles` (name → role logical id), resolved to test ARNs
 * ({@link testArns}): the tests' and the IAM report's reading.
 */
export function rolePolicies(
  template: Json,
  roles: Record<string, string>,
  opts: { resources?: Record<string, ResolvedResource>; parameters?: Record<string, string> } = {},
): Record<string, NamedPolicy[]> {
  return resolvePolicies(extractRolePolicies(template, roles), testArns(template, opts));
}

/** What a logical id of the template stands for locally. */
export type LocalCounterpart =
  | { kind: 'table' }
  | { kind: 'queue'; queue: string; dlq: boolean }
  | { kind: 'topic' }
  | { kind: 'bucket'; bucket: 'evidence' | 'evidence-uploads' }
  | { kind: 'function'; fn: string }
  /** No local counterpart (KMS keys, secrets, log groups): a placeholder ARN that no local call names. */
  | { kind: 'none'; type: string };

/** The local stack's resources the template's references resolve to. */
export interface LocalResources {
  region: string;
  account: string;
  tableName: string;
  /** Stream ARN of the local table (DynamoDB Local's). */
  tableStreamArn: string;
  /** Manifest queue name → local queue ARN and its DLQ's ARN. */
  queues: Record<string, { arn: string; dlqArn: string }>;
  topicArn: string;
  buckets: { evidence: string; 'evidence-uploads': string };
  stateMachineArn: string;
  functionArn(fn: string): string;
}

/**
 * Local ARNs: each logical id through `counterparts` to the local stack's resource (table,
 * indexes, queues, topic, buckets, functions); resources with no local counterpart (KMS keys,
 * secrets, log groups) get explicit placeholder ARNs that no local call names. The payout state
 * machine's ARN, formatted in the template from `stateMachineName`, becomes the local one.
 * @throws Error (when resolving) for a logical id or attribute with no local counterpart.
 */
export function localArns(counterparts: Record<string, LocalCounterpart>, stateMachineName: string, local: LocalResources): ArnResolver {
  const arn = (service: string, resource: string) => `arn:aws:${service}:${local.region}:${local.account}:${resource}`;
  const templateSm = arn('states', `stateMachine:${stateMachineName}`);
  const localSm = local.stateMachineArn;
  const attribute = (id: string, a: string): string => {
    const c = counterparts[id];
    if (!c)
      throw new Error(
        `local IAM: the role policies reference ${id}.${a}, which has no local counterpart (map it in infra/local/iam/policy-cache.ts)`,
      );
    switch (c.kind) {
      case 'table':
        if (a === 'Arn') return arn('dynamodb', `table/${local.tableName}`);
        if (a === 'StreamArn') return local.tableStreamArn;
        if (a === 'Ref') return local.tableName;
        break;
      case 'queue': {
        const q = local.queues[c.queue];
        if (!q) throw new Error(`local IAM: no local queue ${c.queue}`);
        const qArn = c.dlq ? q.dlqArn : q.arn;
        if (a === 'Arn') return qArn;
        if (a === 'QueueName') return qArn.split(':').pop()!;
        break;
      }
      case 'topic':
        if (a === 'Ref' || a === 'TopicArn') return local.topicArn;
        break;
      case 'bucket':
        if (a === 'Arn') return `arn:aws:s3:::${local.buckets[c.bucket]}`;
        if (a === 'Ref') return local.buckets[c.bucket];
        break;
      case 'function':
        if (a === 'Arn') return local.functionArn(c.fn);
        break;
      case 'none':
        if (c.type === 'AWS::KMS::Key') return arn('kms', `key/no-local-counterpart-${id}`);
        if (c.type === 'AWS::SecretsManager::Secret') return arn('secretsmanager', `secret:no-local-counterpart-${id}`);
        if (c.type === 'AWS::Logs::LogGroup') return arn('logs', `log-group:no-local-counterpart-${id}`);
        break;
    }
    throw new Error(`local IAM: cannot resolve ${id}.${a} (${c.kind}) to a local ARN`);
  };
  return {
    pseudo: { 'AWS::Region': local.region, 'AWS::AccountId': local.account, 'AWS::Partition': 'aws', 'AWS::URLSuffix': 'amazonaws.com' },
    ref: (name) => attribute(name, 'Ref'),
    getAtt: attribute,
    finish: (s) =>
      s.startsWith(templateSm)
        ? localSm + s.slice(templateSm.length)
        : s.replace(`:execution:${stateMachineName}:`, `:execution:${localSm.split(':').pop()}:`),
  };
}
