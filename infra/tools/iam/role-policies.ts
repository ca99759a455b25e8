/**
 * Each function's identity policies, as plain IAM JSON, from a synthesized CloudFormation
 * template: the inline `Policies` of its role and every `AWS::IAM::Policy` attached to that role,
 * with CloudFormation intrinsics (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`, pseudo parameters) resolved to concrete ARNs, so a policy simulator can evaluate
 * them (./simulate.ts). Resources get made-up but well-formed names in one test account and
 * region (see {@link TEST_ACCOUNT}, {@link TEST_REGION}); `resolveTemplate` answers what a `Ref`
 * or `Fn::GetAtt` of each logical id stands for.
 */

/** A JSON IAM policy document. */
interface PolicyDocument {
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
const TEST_PARTITION = 'aws';

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
 * `value` with every CloudFormation intrinsic resolved against `resources` (and `parameters`,
 * by their defaults unless given). @throws Error on an intrinsic it cannot resolve (so a test
 * never evaluates a policy with a hole in it).
 */
function resolveIntrinsics(value: unknown, resources: Record<string, ResolvedResource>, parameters: Record<string, string> = {}): unknown {
  const pseudo: Record<string, string> = {
    'AWS::Region': TEST_REGION,
    'AWS::AccountId': TEST_ACCOUNT,
    'AWS::Partition': TEST_PARTITION,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': 'CoffeeTrace',
    'AWS::StackId': `arn:aws:cloudformation:${TEST_REGION}:${TEST_ACCOUNT}:stack/CoffeeTrace/0`,
  };
  const ref = (name: string): string => {
    if (pseudo[name] !== undefined) return pseudo[name]!;
    if (resources[name]) return resources[name]!.ref;
    if (parameters[name] !== undefined) return parameters[name]!;
    throw new Error(`resolveIntrinsics: cannot resolve Ref ${name}`);
  };
  const getAtt = (id: string, attr: string): string => {
    const v = resources[id]?.attributes[attr];
    if (v === undefined) throw new Error(`resolveIntrinsics: cannot resolve Fn::GetAtt ${id}.${attr}`);
    return v;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    const o = v as Json;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      const [k] = keys;
      const arg = o[k!];
      switch (k) {
        case 'Ref':
          return ref(arg);
        case 'Fn::GetAtt': {
          const [id, attr] = Array.isArray(arg) ? arg : String(arg).split(/\.(.+)/);
          return getAtt(id, attr);
        }
        case 'Fn::Join':
          return (walk(arg[1]) as unknown[]).map(String).join(arg[0]);
        case 'Fn::Select':
          return (walk(arg[1]) as unknown[])[Number(walk(arg[0]))];
        case 'Fn::Split':
          return String(walk(arg[1])).split(arg[0]);
        case 'Fn::Sub': {
          const [text, vars] = Array.isArray(arg) ? [arg[0] as string, walk(arg[1]) as Record<string, string>] : [arg as string, {}];
          return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
            if (vars[name] !== undefined) return String(vars[name]);
            const dot = name.indexOf('.');
            return dot > 0 && !name.startsWith('AWS::') ? getAtt(name.slice(0, dot), name.slice(dot + 1)) : ref(name);
          });
        }
        case 'Fn::ImportValue':
        case 'Fn::If':
        case 'Fn::FindInMap':
          throw new Error(`resolveIntrinsics: ${k} is not supported`);
        default:
          break;
      }
    }
    return Object.fromEntries(keys.map((key) => [key, walk(o[key])]));
  };
  return walk(value);
}

/**
 * The identity policies of each role in `roles` (name → role logical id): the role's inline
 * `Policies` and every `AWS::IAM::Policy` whose `Roles` holds a `Ref` to it, resolved (see
 * {@link resolveIntrinsics}). Managed policy ARNs are not followed (the stack attaches none to
 * function roles: a test asserts it). Parameters resolve to their `Default` unless given.
 */
export function rolePolicies(
  template: Json,
  roles: Record<string, string>,
  opts: { resources?: Record<string, ResolvedResource>; parameters?: Record<string, string> } = {},
): Record<string, NamedPolicy[]> {
  const resources = opts.resources ?? resolveTemplate(template);
  const parameters: Record<string, string> = {};
  for (const [name, p] of Object.entries((template.Parameters ?? {}) as Record<string, Json>))
    if (p.Default !== undefined) parameters[name] = String(p.Default);
  Object.assign(parameters, opts.parameters ?? {});
  const all = Object.entries((template.Resources ?? {}) as Record<string, Json>);
  const out: Record<string, NamedPolicy[]> = {};
  for (const [name, roleId] of Object.entries(roles)) {
    const role = template.Resources?.[roleId] as Json | undefined;
    if (role?.Type !== 'AWS::IAM::Role') throw new Error(`rolePolicies: ${roleId} (${name}) is not a role of the template`);
    const policies: NamedPolicy[] = [];
    for (const p of (role.Properties?.Policies ?? []) as Json[]) {
      policies.push({
        name: `${roleId}/${p.PolicyName}`,
        policy: resolveIntrinsics(p.PolicyDocument, resources, parameters) as PolicyDocument,
      });
    }
    for (const [id, r] of all) {
      if (r.Type !== 'AWS::IAM::Policy') continue;
      if (!((r.Properties?.Roles ?? []) as Json[]).some((x) => x?.Ref === roleId)) continue;
      policies.push({ name: id, policy: resolveIntrinsics(r.Properties.PolicyDocument, resources, parameters) as PolicyDocument });
    }
    out[name] = policies;
  }
  return out;
}
