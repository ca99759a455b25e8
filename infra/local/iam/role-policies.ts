/**
 * Each function's IAM role policies, as the CDK stack deploys them, for the local stack's IAM
 * enforcement (./enforcer.ts; docs/local-iam.md). Dev-only: never imported by functions/ or shared/.
 *
 * - {@link synthesizeRolePolicies}: synthesizes CoffeeTraceStack in process (with cdk.json's
 *   context and asset bundling skipped: the template's policies do not depend on the bundles) and
 *   extracts, per function folder, the identity policies attached to its role, with intrinsics
 *   still in them, and what each referenced logical id is.
 * - {@link loadRolePolicies}: the same, cached in `<repo>/.local/iam/role-policies-<hash>.json`,
 *   keyed by a hash of every input of the template (infra/, shared/, statemachines/, cdk.json,
 *   package-lock.json): a synth takes tens of seconds on a loaded machine, a cache hit milliseconds.
 * - {@link resolvePolicies}: replaces Ref / Fn::GetAtt / Fn::Join / Fn::Sub with the ARNs of the
 *   local stack's resources (table, indexes, queues, topic, buckets, state machine); resources with
 *   no local counterpart (KMS keys, secrets, log groups) get explicit placeholder ARNs, and an
 *   intrinsic or logical id this module does not know throws instead of allowing.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '../../../shared/runtime/paths';

/** An IAM policy document as in the template (before or after resolution). */
export interface PolicyDocument {
  Version?: string;
  Statement: Array<Record<string, unknown>>;
}

/** What a logical id of the template stands for locally. */
type LocalCounterpart =
  | { kind: 'table' }
  | { kind: 'queue'; queue: string; dlq: boolean }
  | { kind: 'topic' }
  | { kind: 'bucket'; bucket: 'evidence' | 'evidence-uploads' }
  | { kind: 'function'; fn: string }
  /** No local counterpart (KMS keys, secrets, log groups): a placeholder ARN that no local call names. */
  | { kind: 'none'; type: string };

/** The extracted, unresolved role policies (the cache file's content). */
export interface TemplateRolePolicies {
  /** Bumped when the extraction changes (invalidates caches). */
  format: number;
  /** Function folder → its role's identity policies (inline `AWS::IAM::Policy` documents and the role's own `Policies`). */
  functions: Record<string, Array<{ name: string; document: PolicyDocument }>>;
  /** Logical ids referenced from those policies → what they are. */
  counterparts: Record<string, LocalCounterpart>;
  /** The payout state machine's name in the template (its ARN is formatted from the name). */
  stateMachineName: string;
}

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

const FORMAT = 1;
const HASHED_INPUTS = ['infra', 'shared', 'statemachines', 'cdk.json', 'package-lock.json'];
/** Under HASHED_INPUTS but no input of the template (the local stack, the generated client). */
const NOT_INPUTS = ['infra/local', 'infra/client'];

/** sha256 over the paths and contents of every template input (infra/ but infra/local and infra/client, shared/, statemachines/ .ts/.json files, cdk.json, package-lock.json). */
export function templateInputsHash(root = repoRoot()): string {
  const h = createHash('sha256').update(`format ${FORMAT}\n`);
  const walk = (p: string) => {
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const e of readdirSync(p).sort())
        if (e !== 'node_modules' && !e.startsWith('.') && !NOT_INPUTS.includes(relative(root, join(p, e)))) walk(join(p, e));
    } else if (/\.(ts|json)$/.test(p)) {
      h.update(relative(root, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  for (const i of HASHED_INPUTS) if (existsSync(join(root, i))) walk(join(root, i));
  return h.digest('hex').slice(0, 16);
}

/** Where the cached extraction of a given inputs hash lives. */
export function rolePoliciesCacheFile(hash: string, root = repoRoot()): string {
  return join(root, '.local', 'iam', `role-policies-${hash}.json`);
}

/**
 * The role policies of the current sources: from the cache when its hash matches, else
 * synthesized (and cached). `onSynth` is told the synth's duration.
 */
export async function loadRolePolicies(onSynth?: (ms: number) => void): Promise<TemplateRolePolicies> {
  const file = rolePoliciesCacheFile(templateInputsHash());
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as TemplateRolePolicies;
  const started = Date.now();
  const policies = await synthesizeRolePolicies();
  onSynth?.(Date.now() - started);
  mkdirSync(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(policies));
  renameSync(tmp, file); // atomic: concurrent starts never read half a file
  return policies;
}

/**
 * Synthesizes CoffeeTraceStack (cdk.json context, no asset bundling) into a temporary directory
 * and extracts every function role's identity policies.
 * @throws Error when a role has managed policies (their documents are not in the template) or a
 *   policy is attached to no known function role.
 */
async function synthesizeRolePolicies(): Promise<TemplateRolePolicies> {
  // Imported here: aws-cdk-lib is heavy, and a cache hit never needs it.
  const { App, Stack, CfnResource } = await import('aws-cdk-lib');
  const { CfnBucket } = await import('aws-cdk-lib/aws-s3');
  const { CoffeeTraceStack } = await import('../../stack/coffee-trace-stack');
  const { payoutStateMachineName } = await import('../../stack/payout-state-machine');
  const root = repoRoot();
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const outdir = mkdtempSync(join(tmpdir(), 'coffee-trace-iam-synth-'));
  try {
    // `aws:cdk:bundling-stacks: []`: no stack needs its assets bundled (NodejsFunction and the static-files layer skip esbuild).
    const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
    const template = JSON.parse(readFileSync(join(app.synth().directory, stack.templateFile), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    };
    const idOf = (c: { node: { defaultChild?: unknown } } | unknown): string =>
      stack.getLogicalId(((c as { node: { defaultChild?: unknown } }).node.defaultChild ?? c) as InstanceType<typeof CfnResource>);

    const counterparts: Record<string, LocalCounterpart> = {};
    counterparts[idOf(stack.stateful.table)] = { kind: 'table' };
    counterparts[idOf(stack.stateful.manualReviewTopic)] = { kind: 'topic' };
    for (const [q, queue] of Object.entries(stack.stateful.queues)) {
      counterparts[idOf(queue)] = { kind: 'queue', queue: q, dlq: false };
      if (queue.deadLetterQueue) counterparts[idOf(queue.deadLetterQueue.queue)] = { kind: 'queue', queue: q, dlq: true };
    }
    for (const b of stack.node.findAll().filter((c): c is InstanceType<typeof CfnBucket> => c instanceof CfnBucket)) {
      if (Stack.of(b) !== stack) continue;
      const path = b.node.path;
      counterparts[stack.getLogicalId(b)] = {
        kind: 'bucket',
        bucket: /\/EvidenceUploads\//.test(path)
          ? 'evidence-uploads'
          : /\/Evidence\//.test(path)
            ? 'evidence'
            : (() => {
                throw new Error(`local IAM: bucket ${path} has no local counterpart`);
              })(),
      };
    }
    const roleToFn = new Map<string, string>();
    for (const [fn, f] of stack.functions) {
      roleToFn.set(idOf(f.role), fn);
      counterparts[idOf(f.fn)] = { kind: 'function', fn };
    }
    for (const [id, r] of Object.entries(template.Resources)) {
      if (!counterparts[id] && ['AWS::KMS::Key', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup'].includes(r.Type))
        counterparts[id] = { kind: 'none', type: r.Type };
    }

    const functions: TemplateRolePolicies['functions'] = {};
    for (const fn of roleToFn.values()) functions[fn] = [];
    for (const [id, r] of Object.entries(template.Resources)) {
      const p = r.Properties ?? {};
      if (r.Type === 'AWS::IAM::Role' && roleToFn.has(id)) {
        if ((p.ManagedPolicyArns as unknown[] | undefined)?.length)
          throw new Error(`local IAM: role ${id} (${roleToFn.get(id)}) has managed policies, which the local enforcement cannot read`);
        for (const inline of (p.Policies ?? []) as Array<{ PolicyName: string; PolicyDocument: PolicyDocument }>)
          functions[roleToFn.get(id)!]!.push({ name: inline.PolicyName, document: inline.PolicyDocument });
      }
      if (r.Type === 'AWS::IAM::Policy') {
        for (const role of (p.Roles ?? []) as Array<{ Ref?: string }>) {
          const fn = role.Ref ? roleToFn.get(role.Ref) : undefined;
          if (fn) functions[fn]!.push({ name: String(p.PolicyName ?? id), document: p.PolicyDocument as PolicyDocument });
        }
      }
      if (r.Type === 'AWS::IAM::ManagedPolicy' && ((p.Roles ?? []) as Array<{ Ref?: string }>).some((x) => x.Ref && roleToFn.has(x.Ref))) {
        for (const role of (p.Roles ?? []) as Array<{ Ref?: string }>) {
          const fn = role.Ref ? roleToFn.get(role.Ref) : undefined;
          if (fn) functions[fn]!.push({ name: String(p.ManagedPolicyName ?? id), document: p.PolicyDocument as PolicyDocument });
        }
      }
    }
    return { format: FORMAT, functions, counterparts, stateMachineName: payoutStateMachineName(stack) };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The local ARN of a logical id's attribute (`Ref` when `attr` is undefined). @throws Error for an unknown id or attribute. */
function localArn(id: string, attr: string | undefined, t: TemplateRolePolicies, local: LocalResources): string {
  const c = t.counterparts[id];
  const a = attr ?? 'Ref';
  const arn = (service: string, resource: string) => `arn:aws:${service}:${local.region}:${local.account}:${resource}`;
  if (!c)
    throw new Error(
      `local IAM: the role policies reference ${id}.${a}, which has no local counterpart (map it in infra/local/iam/role-policies.ts)`,
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
      // Explicit placeholders: nothing local is named like this, so a grant on them allows no local call.
      if (c.type === 'AWS::KMS::Key') return arn('kms', `key/no-local-counterpart-${id}`);
      if (c.type === 'AWS::SecretsManager::Secret') return arn('secretsmanager', `secret:no-local-counterpart-${id}`);
      if (c.type === 'AWS::Logs::LogGroup') return arn('logs', `log-group:no-local-counterpart-${id}`);
      break;
  }
  throw new Error(`local IAM: cannot resolve ${id}.${a} (${c.kind}) to a local ARN`);
}

/**
 * The policies with every intrinsic replaced by local values. `AWS::Region`, `AWS::AccountId`,
 * `AWS::Partition`, `AWS::URLSuffix` are the local stack's; the payout state machine's
 * template ARN becomes the local one.
 * @throws Error on an intrinsic function or logical id it does not know.
 */
export function resolvePolicies(
  t: TemplateRolePolicies,
  local: LocalResources,
): Record<string, Array<{ name: string; document: PolicyDocument }>> {
  const pseudo: Record<string, string> = {
    'AWS::Region': local.region,
    'AWS::AccountId': local.account,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
  };
  const templateSm = `arn:aws:states:${local.region}:${local.account}:stateMachine:${t.stateMachineName}`;
  const localSm = local.stateMachineArn;
  const fixSm = (s: string) =>
    s.startsWith(templateSm)
      ? localSm + s.slice(templateSm.length)
      : s.replace(`:execution:${t.stateMachineName}:`, `:execution:${localSm.split(':').pop()}:`);
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (v === null || typeof v !== 'object') return typeof v === 'string' ? fixSm(v) : v;
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) {
      const k = keys[0]!;
      const arg = o[k];
      if (k === 'Ref') {
        const id = String(arg);
        return pseudo[id] ?? localArn(id, undefined, t, local);
      }
      if (k === 'Fn::GetAtt') {
        const [id, attr] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
        return localArn(id!, attr!, t, local);
      }
      if (k === 'Fn::Join') {
        const [sep, parts] = arg as [string, unknown[]];
        return fixSm((parts.map(resolve) as string[]).join(sep));
      }
      if (k === 'Fn::Sub') {
        const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
        return fixSm(
          text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
            if (name in vars) return String(resolve(vars[name]));
            if (pseudo[name]) return pseudo[name]!;
            const [id, attr] = name.split('.');
            return localArn(id!, attr, t, local);
          }),
        );
      }
      throw new Error(`local IAM: the role policies use ${k}, which the local enforcement cannot resolve`);
    }
    return Object.fromEntries(keys.map((key) => [key, resolve(o[key])]));
  };
  return Object.fromEntries(
    Object.entries(t.functions).map(([fn, ps]) => [fn, ps.map((p) => ({ name: p.name, document: resolve(p.document) as PolicyDocument }))]),
  );
}
