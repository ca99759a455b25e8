/**
 * The role policies the local stack's IAM enforcement evaluates (./enforcer.ts; docs/local-iam.md),
 * read from the CDK stack by the one role-policy reader (infra/tools/iam/role-policies.ts), and
 * cached. Dev-only: never imported by functions/ or shared/.
 *
 * - {@link loadRolePolicies}: the unresolved policies of every function and what each referenced
 *   logical id is locally, cached in `<repo>/.local/iam/role-policies-<hash>.json`, keyed by a hash
 *   of every input of the template (infra/, shared/, statemachines/, cdk.json, package-lock.json):
 *   a synth takes tens of seconds on a loaded machine, a cache hit milliseconds.
 * - {@link synthesizeRolePolicies}: synthesizes CoffeeTraceStack in process (cdk.json's context,
 *   asset bundling skipped: the policies do not depend on the bundles) and reads its template
 *   flattened with the nested stacks (infra/tools/stack-templates.ts), where the functions live.
 * The caller resolves them with `resolvePolicies(t.functions, localArns(...))`.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '../../../shared/runtime/paths';
import { extractRolePolicies, functionRoles, type LocalCounterpart, type NamedPolicy } from '../../tools/iam/role-policies';

/** The extracted, unresolved role policies (the cache file's content). */
export interface TemplateRolePolicies {
  /** Bumped when the extraction changes (invalidates caches). */
  format: number;
  /** Function folder → its role's identity policies, intrinsics unresolved (infra/tools/iam/role-policies.ts). */
  functions: Record<string, NamedPolicy[]>;
  /** Logical ids referenced from those policies → what they are. */
  counterparts: Record<string, LocalCounterpart>;
  /** The payout state machine's name in the template (its ARN is formatted from the name). */
  stateMachineName: string;
}

const FORMAT = 2;
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
 * and extracts every function role's identity policies from its flattened template.
 * @throws Error when a role has managed policies or a bucket has no local counterpart.
 */
async function synthesizeRolePolicies(): Promise<TemplateRolePolicies> {
  // Imported here: aws-cdk-lib is heavy, and a cache hit never needs it.
  const { App, Stack, CfnResource } = await import('aws-cdk-lib');
  const { CfnBucket } = await import('aws-cdk-lib/aws-s3');
  const { CoffeeTraceStack } = await import('../../stack/coffee-trace-stack');
  const { payoutStateMachineName } = await import('../../stack/payout-state-machine');
  const { flatTemplate } = await import('../../tools/stack-templates');
  const root = repoRoot();
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const outdir = mkdtempSync(join(tmpdir(), 'coffee-trace-iam-synth-'));
  try {
    // `aws:cdk:bundling-stacks: []`: no stack needs its assets bundled (NodejsFunction and the static-files layer skip esbuild).
    const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
    const template = flatTemplate(stack) as { Resources: Record<string, { Type: string }> };
    const idOf = (c: { node: { defaultChild?: unknown } } | unknown): string => {
      const el = ((c as { node: { defaultChild?: unknown } }).node.defaultChild ?? c) as InstanceType<typeof CfnResource>;
      return Stack.of(el).getLogicalId(el);
    };

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
    for (const [fn, f] of stack.functions) counterparts[idOf(f.fn)] = { kind: 'function', fn };
    for (const [id, r] of Object.entries(template.Resources)) {
      if (!counterparts[id] && ['AWS::KMS::Key', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup'].includes(r.Type))
        counterparts[id] = { kind: 'none', type: r.Type };
    }
    return {
      format: FORMAT,
      functions: extractRolePolicies(template, functionRoles(stack.functions)),
      counterparts,
      stateMachineName: payoutStateMachineName(stack),
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
