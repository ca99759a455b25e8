/**
 * IAM of every function, evaluated: the synthesized template's role policies (with its nested
 * stacks, infra/tools/stack-templates.ts; intrinsics
 * resolved to test ARNs, infra/tools/iam/role-policies.ts) run through an IAM policy simulator
 * (infra/tools/iam/simulate.ts) for the calls the code makes. Who does what comes from the code:
 * a static call graph (infra/tools/iam/call-graph.ts) from the adapters that append audit
 * entries, delete items, and read or write the evidence buckets, up to the function folders; the
 * item deletes themselves are found by scanning the DynamoDB adapters, and key prefixes come from
 * the key builders (shared/adapters/dynamodb/keys.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { CallGraph, type CodeTarget } from '../../infra/tools/iam/call-graph';
import { functionRoles, resolveTemplate, rolePolicies, type NamedPolicy, type ResolvedResource } from '../../infra/tools/iam/role-policies';
import { flatTemplate } from '../../infra/tools/stack-templates';
import { evaluate } from '../../infra/tools/iam/simulate';
import { CoffeeTraceStack } from '../../infra/stack/coffee-trace-stack';
import { GSI1 } from '../../infra/stack/stateful-resources';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { outboundWebhookKeys } from '../../shared/adapters/outbound-webhooks/dynamo-store';
import { EVIDENCE_UPLOAD_KEY_PREFIX } from '../../shared/domain/evidence-upload';
import { functionManifest, type Need } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';

jest.setTimeout(600_000);

type Json = Record<string, any>;

const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Json };
const fns = functionManifest();
const needsOf = (fn: string): Set<Need> => new Set(fns.find((f) => f.fn === fn)!.needs);
const withNeed = (need: Need): string[] =>
  fns
    .filter((f) => f.needs.includes(need))
    .map((f) => f.fn)
    .sort();
const writers = withNeed('table:write');

let policies: Record<string, NamedPolicy[]>;
let resolved: Record<string, ResolvedResource>;
let tableArn: string;
let uploadsBucketArn: string;
let evidenceBucketArn: string;

/** The logical id a function's environment variable `name` refers to (`{ Ref: id }`). */
function refOfEnv(template: Json, stack: CoffeeTraceStack, fn: string, name: string): string {
  const f = stack.functions.get(fn)!.fn;
  const id = f.stack.getLogicalId(f.node.defaultChild as CfnResource);
  const v = template.Resources[id].Properties.Environment.Variables[name];
  if (!v?.Ref) throw new Error(`${fn}: ${name} is not a Ref`);
  return v.Ref as string;
}

beforeAll(() => {
  const started = Date.now();
  // Bundling skipped (`aws:cdk:bundling-stacks: []`): IAM does not depend on the bundles' bytes.
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  // The functions' roles are in their areas' nested stacks: one template with them all.
  const template = flatTemplate(stack);
  resolved = resolveTemplate(template);
  policies = rolePolicies(template, functionRoles(stack.functions), { resources: resolved });
  tableArn = resolved[refOfEnv(template, stack, 'update-batch-stage', 'TABLE_NAME')]!.attributes.Arn!;
  uploadsBucketArn = resolved[refOfEnv(template, stack, 'update-batch-stage', 'EVIDENCE_UPLOADS_BUCKET')]!.attributes.Arn!;
  evidenceBucketArn = resolved[refOfEnv(template, stack, 'get-ipfs', 'EVIDENCE_BUCKET')]!.attributes.Arn!;
  console.log(`CoffeeTraceStack synthesized for IAM in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

/** Whether `fn`'s role may make the call. */
async function may(fn: string, action: string, resource: string, context: Record<string, string | string[]> = {}): Promise<boolean> {
  const p = policies[fn];
  if (!p) throw new Error(`no role policies for ${fn}`);
  return (await evaluate(p, { action, resource, context })).allowed;
}

/** An item operation on the table, with its partition key as `dynamodb:LeadingKeys` (as DynamoDB sends it). */
const onItem = (fn: string, action: string, pk: string) => may(fn, action, tableArn, { 'dynamodb:LeadingKeys': [pk] });

const BATCH = 'BATCH-2026-000001';

describe("the issue's refusals and over-grants", () => {
  test('ledger-writer may delete a loan guard (a repaid or cancelled loan releases it in its transaction)', async () => {
    expect(await onItem('ledger-writer', 'dynamodb:DeleteItem', keys.loanGuard(BATCH).PK)).toBe(true);
    // …and nothing else.
    expect(await onItem('ledger-writer', 'dynamodb:DeleteItem', keys.loan('LOAN-2026-000001').PK)).toBe(false);
    expect(await onItem('ledger-writer', 'dynamodb:DeleteItem', keys.payment('PAY-2026-000001-01').PK)).toBe(false);
  });

  test('update-batch-stage may list the uploads prefix of the evidence uploads bucket (a missing upload is a 404, not a 403)', async () => {
    const key = `${EVIDENCE_UPLOAD_KEY_PREFIX}${BATCH}/UPL-01JD5Z0000000000000000000`;
    expect(await may('update-batch-stage', 's3:ListBucket', uploadsBucketArn, { 's3:prefix': key })).toBe(true);
    expect(await may('update-batch-stage', 's3:GetObject', `${uploadsBucketArn}/${key}`)).toBe(true);
    expect(await may('update-batch-stage', 's3:ListBucket', uploadsBucketArn, { 's3:prefix': 'other/' })).toBe(false);
  });

  test.each(['create-webhook-endpoint', 'outbound-webhook-sender'])('%s may not put audit entries', async (fn) => {
    expect(await onItem(fn, 'dynamodb:PutItem', keys.audit(BATCH, 1).PK)).toBe(false);
    // It still writes its own items.
    expect(await onItem(fn, 'dynamodb:PutItem', outboundWebhookKeys.endpoint('whe_1').PK)).toBe(true);
  });

  test('payout discards may delete payouts, disbursements and payout guards, never an MFI deposit', async () => {
    for (const fn of withNeed('payout:discard')) {
      expect(await onItem(fn, 'dynamodb:DeleteItem', keys.payment('PAY-2026-000001-01').PK)).toBe(true);
      expect(await onItem(fn, 'dynamodb:DeleteItem', keys.payment('DISB-2026-000001').PK)).toBe(true);
      expect(await onItem(fn, 'dynamodb:DeleteItem', keys.payoutGuard(BATCH, 'NET_COFFEE_PAYMENT').PK)).toBe(true);
      expect(await onItem(fn, 'dynamodb:DeleteItem', keys.payment('DEP-2026-000001').PK)).toBe(false);
      expect(await onItem(fn, 'dynamodb:DeleteItem', keys.loanGuard(BATCH).PK)).toBe(false);
    }
  });
});

describe('derived from the code', () => {
  let graph: CallGraph;
  const reaching = (targets: CodeTarget[]): string[] => [...new Set(targets.flatMap((t) => [...graph.functionsReaching(t)]))].sort();

  beforeAll(() => {
    graph = new CallGraph(repoRoot());
  });

  test('table:batch-read is exactly the functions that read the table in batches (BatchGetItem)', () => {
    const batchReaders = reaching([
      { file: 'shared/adapters/dynamodb/anchor-repo.ts', name: 'AuditAnchorRepository.heads' },
      { file: 'shared/adapters/dynamodb/anchor-repo.ts', name: 'AuditAnchorRepository.anchoredHeads' },
      { file: 'shared/adapters/dynamodb/batch-get.ts', name: 'batchGetItems' },
    ]);
    expect(batchReaders.length).toBeGreaterThan(0);
    expect(withNeed('table:batch-read')).toEqual(batchReaders);
  });

  test('audit:append is exactly the writers that append audit entries', () => {
    const appenders = reaching([
      { file: 'shared/adapters/dynamodb/audit-append.ts', name: 'transactWithAudit' },
      { file: 'shared/adapters/dynamodb/audit-append.ts', name: 'transactWithAudits' },
      { file: 'shared/adapters/dynamodb/batch-repo.ts', name: 'auditPut' },
    ]).filter((fn) => writers.includes(fn));
    expect(appenders.length).toBeGreaterThan(0);
    expect(withNeed('audit:append')).toEqual(appenders);
  });

  /**
   * Every delete in the adapters (a `Delete` inside a transaction or a DeleteCommand),
   * with the key builder it deletes and the adapter method it sits in.
   */
  function deleteSites(): Array<{ file: string; method: string; builder: string }> {
    const root = join(repoRoot(), 'shared/adapters');
    const out: Array<{ file: string; method: string; builder: string }> = [];
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    for (const name of files) {
      const src = readFileSync(join(root, name), 'utf8');
      const cls = /export class (\w+)/.exec(src)?.[1];
      for (const m of src.matchAll(/(?:\bDelete:\s*\{|new DeleteCommand\()/g)) {
        const after = src.slice(m.index!, m.index! + 400);
        const builder = /Key:\s*keys\.(\w+)\(/.exec(after)?.[1] ?? '(unknown key)';
        const before = src.slice(0, m.index!);
        const methods = [...before.matchAll(/^ {2}(?:async )?(\w+)\(/gm)];
        const method = methods.length ? methods[methods.length - 1]![1]! : '(module)';
        out.push({ file: `shared/adapters/${name}`, method: cls ? `${cls}.${method}` : method, builder });
      }
    }
    return out;
  }

  /** Which need allows deleting the items of each key builder. */
  const DELETE_NEED: Record<string, { need: Need; sample: string }> = {
    payment: { need: 'payout:discard', sample: keys.payment('PAY-2026-000001-01').PK },
    payoutGuard: { need: 'payout:discard', sample: keys.payoutGuard(BATCH, 'NET_COFFEE_PAYMENT').PK },
    loanGuard: { need: 'loan-guard:release', sample: keys.loanGuard(BATCH).PK },
  };
  /**
   * Functions the call graph finds reaching a deleting method that never take the deleting
   * branch (the graph counts every call, whatever its arguments), each with the reason.
   */
  const NEVER_DELETES: Record<string, Record<string, string>> = {
    'LoanRepository.transition': {
      'payout-reconciler':
        'moves PENDING loans to ACTIVE only (reconcileLoans): the guard is deleted on REPAID or CANCELLED, which only the ledger writer records',
    },
  };

  test('every delete in the adapters is covered by a need, held by exactly the functions that reach it, and allowed for them', async () => {
    const sites = deleteSites();
    expect(sites.length).toBeGreaterThan(0);
    const holders = new Map<Need, Set<string>>();
    for (const site of sites) {
      const rule = DELETE_NEED[site.builder];
      // A new delete (or one this scan cannot name) must be given a need here and in infra/stack/needs.ts DELETABLE_PARTITIONS.
      expect({ site, covered: rule !== undefined }).toEqual({ site, covered: true });
      const exceptions = NEVER_DELETES[site.method] ?? {};
      const reachers = reaching([{ file: site.file, name: site.method }]).filter((fn) => !(fn in exceptions));
      for (const fn of reachers) {
        expect({ fn, site: site.method, need: rule!.need, has: needsOf(fn).has(rule!.need) }).toEqual({
          fn,
          site: site.method,
          need: rule!.need,
          has: true,
        });
        expect({ fn, delete: rule!.sample, allowed: await onItem(fn, 'dynamodb:DeleteItem', rule!.sample) }).toEqual({
          fn,
          delete: rule!.sample,
          allowed: true,
        });
        holders.set(rule!.need, new Set([...(holders.get(rule!.need) ?? []), fn]));
      }
    }
    // No function holds a delete need the code does not use.
    for (const need of new Set(Object.values(DELETE_NEED).map((r) => r.need))) {
      expect({ need, fns: withNeed(need) }).toEqual({ need, fns: [...(holders.get(need) ?? [])].sort() });
    }
  });

  test('evidence buckets: pin-store is exactly the writers, evidence-archive:read the CAR readers, evidence-files:read the file URL issuers', () => {
    const archive = 'shared/adapters/aws/s3-evidence-archive.ts';
    expect(withNeed('pin-store')).toEqual(reaching([{ file: archive, name: 'S3EvidenceArchive.putCar' }]));
    expect(withNeed('evidence-archive:read')).toEqual(reaching([{ file: archive, name: 'S3EvidenceArchive.getCar' }]));
    expect(withNeed('evidence-files:read')).toEqual(reaching([{ file: archive, name: 'S3EvidenceArchive.fileUrl' }]));
    expect(withNeed('evidence-uploads:read')).toEqual(
      reaching([{ file: 'shared/adapters/aws/s3-object-reader.ts', name: 'S3UploadReader.read' }]),
    );
    const ddsDocuments = 'shared/adapters/aws/s3-dds-documents.ts';
    expect(withNeed('dds-documents:write')).toEqual(reaching([{ file: ddsDocuments, name: 'S3DdsDocumentStore.put' }]));
    expect(withNeed('dds-documents:read')).toEqual(reaching([{ file: ddsDocuments, name: 'S3DdsDocumentStore.get' }]));
  });
});

describe('evidence buckets, evaluated', () => {
  test('writers put CARs and files but read nothing; CAR readers read car/ only; file URL issuers files/', async () => {
    const car = `${evidenceBucketArn}/car/bafyroot.car`;
    const file = `${evidenceBucketArn}/files/bafyroot/photo-1.jpg`;
    for (const f of fns) {
      const n = needsOf(f.fn);
      expect({ fn: f.fn, putCar: await may(f.fn, 's3:PutObject', car), putFile: await may(f.fn, 's3:PutObject', file) }).toEqual({
        fn: f.fn,
        putCar: n.has('pin-store'),
        putFile: n.has('pin-store'),
      });
      expect({ fn: f.fn, getCar: await may(f.fn, 's3:GetObject', car), getFile: await may(f.fn, 's3:GetObject', file) }).toEqual({
        fn: f.fn,
        getCar: n.has('evidence-archive:read'),
        getFile: n.has('evidence-files:read'),
      });
      expect({ fn: f.fn, listCar: await may(f.fn, 's3:ListBucket', evidenceBucketArn, { 's3:prefix': 'car/bafyroot.car' }) }).toEqual({
        fn: f.fn,
        listCar: n.has('evidence-archive:read'),
      });
    }
  });

  test("statements' documents (dds/): only their keepers put them, only their readers get and list them, and no evidence need reaches them", async () => {
    const doc = `${evidenceBucketArn}/dds/DDS-PO-1/${'a'.repeat(64)}.json`;
    for (const f of fns) {
      const n = needsOf(f.fn);
      expect({
        fn: f.fn,
        put: await may(f.fn, 's3:PutObject', doc),
        get: await may(f.fn, 's3:GetObject', doc),
        list: await may(f.fn, 's3:ListBucket', evidenceBucketArn, { 's3:prefix': 'dds/DDS-PO-1/x.json' }),
      }).toEqual({ fn: f.fn, put: n.has('dds-documents:write'), get: n.has('dds-documents:read'), list: n.has('dds-documents:read') });
    }
    expect(withNeed('dds-documents:read')).toEqual([
      'amend-dds',
      'dds-filer',
      'generate-dds',
      'get-dds',
      'get-dds-evidence',
      'get-dds-xml',
      'withdraw-dds',
    ]);
    expect(withNeed('dds-documents:write')).toEqual(['amend-dds', 'generate-dds']);
  });
});

describe('every write path, evaluated', () => {
  /** One sample partition key of every key builder (shared/adapters/dynamodb/keys.ts) that makes one. */
  function samplePartitions(): Array<{ builder: string; pk: string }> {
    const out: Array<{ builder: string; pk: string }> = [];
    const builders: Record<string, unknown> = {
      ...keys,
      ...Object.fromEntries(Object.entries(outboundWebhookKeys).map(([k, v]) => [`outboundWebhook.${k}`, v])),
    };
    for (const [builder, make] of Object.entries(builders)) {
      const f = make as (...args: unknown[]) => unknown;
      let made: unknown;
      try {
        made = f(...Array.from({ length: f.length }, (_, i) => (i === 0 ? 'X-2026-000001' : 'Y')));
      } catch {
        made = f('bafyroot', { batch_id: BATCH, history_index: 1 });
      }
      if (made && typeof made === 'object' && typeof (made as Json).PK === 'string') out.push({ builder, pk: (made as Json).PK });
    }
    return out;
  }

  test('writers may put, update and condition-check every kind of item; audit entries only appenders may put, and nobody may update', async () => {
    const partitions = samplePartitions();
    expect(partitions.map((p) => p.builder)).toEqual(expect.arrayContaining(['audit', 'loanGuard', 'payment', 'batch', 'ledgerTx']));
    for (const fn of writers) {
      const appends = needsOf(fn).has('audit:append');
      for (const { builder, pk } of partitions) {
        const isAudit = builder === 'audit';
        const got = {
          put: await onItem(fn, 'dynamodb:PutItem', pk),
          update: await onItem(fn, 'dynamodb:UpdateItem', pk),
          check: await onItem(fn, 'dynamodb:ConditionCheckItem', pk),
        };
        expect({ fn, builder, ...got }).toEqual({ fn, builder, put: !isAudit || appends, update: !isAudit, check: true });
      }
    }
  });

  test('readers may read (point reads and index queries) and write nothing', async () => {
    for (const f of fns) {
      const n = needsOf(f.fn);
      const reads = n.has('table:read') || n.has('table:write');
      expect({ fn: f.fn, get: await onItem(f.fn, 'dynamodb:GetItem', keys.batch(BATCH).PK) }).toEqual({ fn: f.fn, get: reads });
      expect({ fn: f.fn, query: await may(f.fn, 'dynamodb:Query', `${tableArn}/index/${GSI1}`) }).toEqual({ fn: f.fn, query: reads });
      expect({ fn: f.fn, scan: await may(f.fn, 'dynamodb:Scan', tableArn) }).toEqual({ fn: f.fn, scan: false });
      if (!n.has('table:write'))
        expect({ fn: f.fn, put: await onItem(f.fn, 'dynamodb:PutItem', keys.batch(BATCH).PK) }).toEqual({ fn: f.fn, put: false });
      expect({ fn: f.fn, batchWrite: await onItem(f.fn, 'dynamodb:BatchWriteItem', keys.batch(BATCH).PK) }).toEqual({
        fn: f.fn,
        batchWrite: false,
      });
    }
  });
});
