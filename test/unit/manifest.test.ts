/**
 * The service manifest (shared/manifest.ts) against itself and against the code that reads the
 * environment: every variable the code reads is declared by a Need (or listed as undeclared on
 * purpose), every variable a Need declares is read somewhere, and the local stack's start check
 * names what is missing. The CDK side is in test/infra/stack.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  AUTHORIZER_FN,
  COMMON_ENV,
  functionManifest,
  manifestProblems,
  missingLocalEnvironment,
  NEEDS,
  QUEUES,
  queueConsumers,
  routes,
  UNDECLARED_ENV,
  workers,
  type Need,
  type NeedSpec,
  type QueueName,
  type WorkerDef,
} from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { DEFAULT_ANCHOR_INTERVAL_S } from '../../shared/domain/anchoring';

const root = repoRoot();
const needSpecs = Object.entries(NEEDS) as Array<[Need, NeedSpec]>;

/** `.ts` files under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.isFile() && e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Source without block comments and whole-line `//` comments (URLs in strings survive). */
function code(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

/** The code that runs in functions: shared/ (minus the manifest itself) and functions/. */
const files = [...sources(join(root, 'shared')), ...sources(join(root, 'functions'))]
  .filter((f) => !/shared\/(manifest|http\/routes)\.ts$/.test(f))
  .map((f) => ({ file: relative(root, f), text: code(f) }));

/** Every environment variable read by name in the code, with where. */
function readsOfEnvironment(): Array<{ name: string; file: string; how: string }> {
  const patterns: Array<[string, RegExp]> = [
    ['requireEnv', /\brequireEnv\(\s*'([A-Z0-9_]+)'/g],
    ['envOr', /\benvOr\(\s*'([A-Z0-9_]+)'/g],
    ['secret', /\bsecret\(\s*'([A-Z0-9_]+)'/g],
    ['secret ARN', /\bsecret\(\s*'[A-Z0-9_]+'\s*,\s*'([A-Z0-9_]+)'/g],
    ['queue URL', /\bSqsWorkQueue(?:<[^>]*>)?\(\s*'([A-Z0-9_]+)'/g],
    ['process.env', /\bprocess\.env(?:\.([A-Z0-9_]+)|\[\s*'([A-Z0-9_]+)'\s*\])/g],
  ];
  return files.flatMap(({ file, text }) =>
    patterns.flatMap(([how, re]) => [...text.matchAll(re)].map((m) => ({ name: (m[1] ?? m[2])!, file, how }))),
  );
}

describe('manifest', () => {
  test('is consistent (queues, batch sizes, schedules, substitutions, route timeouts)', () => {
    expect(manifestProblems()).toEqual([]);
  });

  test('one entry per distinct function: routes, workers and the authorizer', () => {
    const fns = functionManifest();
    const expected = new Set([...routes.map((r) => r.fn), ...workers.map((w) => w.fn), AUTHORIZER_FN]);
    expect(fns.map((f) => f.fn).sort()).toEqual([...expected].sort());
    expect(fns.find((f) => f.fn === AUTHORIZER_FN)).toMatchObject({
      kind: 'authorizer',
      env: ['JWKS_URL', 'JWT_AUDIENCE', 'JWT_ISSUER'],
      secrets: [],
    });
    expect(
      fns
        .find((f) => f.fn === 'submit-batch')!
        .routes.map((r) => r.path)
        .sort(),
    ).toEqual(['/batch/submit', '/v1/batch/submit']);
  });

  test("every queue has one consumer with a batch size; the consumer's entry carries both", () => {
    const consumers = queueConsumers();
    const fns = functionManifest();
    for (const q of Object.keys(QUEUES) as QueueName[]) {
      const entry = fns.find((f) => f.fn === consumers[q].fn)!;
      expect(entry).toMatchObject({ kind: 'queue-consumer', batchSize: consumers[q].batchSize });
      expect([entry.queue, ...(entry.extraQueues ?? [])]).toContain(q);
    }
    // The batch sizes both stacks use.
    expect(Object.fromEntries((Object.keys(QUEUES) as QueueName[]).map((q) => [q, consumers[q].batchSize]))).toEqual({
      'payout-request-queue': 5,
      'ledger-write-queue': 10,
      'ledger-receipt-queue': 10,
      'dds-filing-queue': 1,
      'outbound-webhook-queue': 10,
      'evidence-pin-queue': 5,
      'order-work-queue': 1,
    });
  });

  test('scheduled workers: the reconcilers and the merchant balance monitor every 5 minutes, the national-registry check and the chain watcher every minute; none of them consumes a queue', () => {
    const scheduled = Object.fromEntries(workers.filter((w) => w.kind === 'scheduled').map((w) => [w.fn, w.schedule]));
    expect(scheduled).toEqual({
      'payout-reconciler': 'rate(5 minutes)',
      'ledger-write-reconciler': 'rate(5 minutes)',
      'national-registry-check': 'rate(1 minute)',
      'chain-event-watcher': 'rate(1 minute)',
      'audit-anchorer': 'rate(5 minutes)',
      'payout-balance-monitor': 'rate(5 minutes)',
      'purchase-order-reconciler': 'rate(5 minutes)',
    });
    // The anchor interval (docs/api/anchoring.md#anchoring-of-the-audit-log: ANCHOR_INTERVAL_S, default 300) is the anchorer's setting.
    expect(workers.find((w) => w.fn === 'audit-anchorer')).toMatchObject({ intervalVariable: 'ANCHOR_INTERVAL_S' });
    expect(scheduled['audit-anchorer']).toBe(`rate(${DEFAULT_ANCHOR_INTERVAL_S / 60} minutes)`);
    const byFn = new Map(functionManifest().map((f) => [f.fn, f]));
    expect(byFn.get('register-farmer')!.needs).toEqual(['table:write', 'gfw', 'maaif']);
    expect(byFn.get('payout-reconciler')!.needs.filter((n) => n.endsWith(':send'))).toEqual([]);
    expect(byFn.get('ledger-write-reconciler')!.needs).toEqual(['table:write', 'ledger-write-queue:send', 'evidence-pin-queue:send']);
    expect(byFn.get('purchase-order-reconciler')!.needs).toEqual(['table:write', 'order-work-queue:send']);
  });

  test('problems are reported: a queue without consumer, a bad batch size, a function declared twice', () => {
    const without = workers.filter((w) => w.queue !== 'dds-filing-queue');
    expect(manifestProblems(routes, without)).toContainEqual(expect.stringContaining('queue dds-filing-queue has 0 consumers'));
    const oversized = workers.map((w): WorkerDef => (w.kind === 'queue-consumer' ? { ...w, batchSize: 11 } : w));
    expect(manifestProblems(routes, oversized)).toContainEqual(expect.stringContaining('batch size 11'));
    const twice = [...workers, { ...workers[0]!, fn: 'get-batch' } as WorkerDef];
    expect(manifestProblems(routes, twice)).toContainEqual(
      expect.stringContaining('function get-batch is declared as route and as state-machine-task'),
    );
  });

  test('timeouts and memory: outside calls get 28 s on routes, ledger signers 1024 MiB, workers their own', () => {
    const byFn = new Map(functionManifest().map((f) => [f.fn, f]));
    expect(byFn.get('get-batch')).toMatchObject({ timeoutSeconds: 10, memoryMiB: 512 });
    expect(byFn.get('create-farmer-payout')).toMatchObject({ timeoutSeconds: 28, memoryMiB: 512 });
    expect(byFn.get('ledger-writer')).toMatchObject({ timeoutSeconds: 60, memoryMiB: 1024 });
    expect(byFn.get(AUTHORIZER_FN)).toMatchObject({ timeoutSeconds: 10, memoryMiB: 512 });
  });

  test('secrets: NAME locally, NAME_SECRET_ARN in AWS (NAME_ARN for the ..._SECRET webhook secrets)', () => {
    const arns = Object.fromEntries(needSpecs.flatMap(([, spec]) => spec.secrets.map((s) => [s.name, s.arnVariable])));
    // The ledger signer's private key is a local secret only: in AWS the ledger signer is a KMS key (LEDGER_SIGNER_KMS_KEY_ID).
    const localOnly = Object.fromEntries(
      needSpecs.flatMap(([, spec]) => (spec.local?.secrets ?? []).filter((s) => !(s.name in arns)).map((s) => [s.name, s.arnVariable])),
    );
    expect(localOnly).toEqual({ LEDGER_SIGNER_KEY: 'LEDGER_SIGNER_KEY_SECRET_ARN' });
    for (const need of ['ledger', 'vault'] as const) {
      expect(NEEDS[need].secrets).toEqual([]);
      expect(NEEDS[need].env).toContain('LEDGER_SIGNER_KMS_KEY_ID');
    }
    expect(arns).toEqual({
      PAYOUT_PROVIDER_CREDENTIALS: 'PAYOUT_PROVIDER_CREDENTIALS_SECRET_ARN',
      PAWAPAY_CREDENTIALS: 'PAWAPAY_CREDENTIALS_SECRET_ARN',
      PAYOUT_WEBHOOK_SECRET: 'PAYOUT_WEBHOOK_SECRET_ARN',
      CHAIN_WEBHOOK_SECRET: 'CHAIN_WEBHOOK_SECRET_ARN',
      EVIDENCE_PINNING_CREDENTIALS: 'EVIDENCE_PINNING_CREDENTIALS_SECRET_ARN',
      GFW_API_KEY: 'GFW_API_KEY_SECRET_ARN',
      MAAIF_API_KEY: 'MAAIF_API_KEY_SECRET_ARN',
      EUDR_AUTH_KEY: 'EUDR_AUTH_KEY_SECRET_ARN',
      PRICE_FEED_TOKEN: 'PRICE_FEED_TOKEN_SECRET_ARN',
      ONRAMP_CREDENTIALS: 'ONRAMP_CREDENTIALS_SECRET_ARN',
      ONRAMP_WEBHOOK_SECRET: 'ONRAMP_WEBHOOK_SECRET_ARN',
    });
  });
});

describe('the code reads only declared variables', () => {
  const declared = new Set<string>([...COMMON_ENV, ...Object.keys(UNDECLARED_ENV)]);
  for (const [, spec] of needSpecs) {
    for (const n of [...spec.env, ...(spec.optionalEnv ?? []), ...(spec.local?.env ?? [])]) declared.add(n);
    for (const s of [...spec.secrets, ...(spec.local?.secrets ?? [])]) declared.add(s.name).add(s.arnVariable);
  }
  const reads = readsOfEnvironment();

  test('the scan finds the reads it should (guards the patterns)', () => {
    const names = new Set(reads.map((r) => r.name));
    for (const n of [
      'TABLE_NAME',
      'JWKS_URL',
      'LEDGER_SIGNER_KEY',
      'GFW_API_KEY_SECRET_ARN',
      'LEDGER_WRITE_QUEUE_URL',
      'IPFS_GATEWAY_URL',
      'RECONCILE_AFTER_SECONDS',
    ]) {
      expect(names).toContain(n);
    }
  });

  test('every variable read by requireEnv, envOr, secret, SqsWorkQueue or process.env is declared by a Need or listed as undeclared on purpose', () => {
    const undeclared = reads.filter((r) => !declared.has(r.name)).map((r) => `${r.name} (${r.how} in ${r.file})`);
    expect(undeclared).toEqual([]);
  });

  test('secret(NAME, ARN_VARIABLE) names the ARN variable the manifest gives NAME', () => {
    const arnOf = new Map(
      needSpecs.flatMap(([, spec]) => [...spec.secrets, ...(spec.local?.secrets ?? [])].map((s) => [s.name, s.arnVariable] as const)),
    );
    for (const { file, text } of files) {
      for (const m of text.matchAll(/\bsecret\(\s*'([A-Z0-9_]+)'\s*(?:,\s*'([A-Z0-9_]+)'\s*)?\)/g)) {
        const [, name, arnVariable] = m;
        expect({ file, name, known: arnOf.has(name!) }).toEqual({ file, name, known: true });
        expect({ file, name, arnVariable: arnVariable ?? `${name}_SECRET_ARN` }).toEqual({ file, name, arnVariable: arnOf.get(name!) });
      }
    }
  });

  test('every variable and secret a Need declares is read somewhere in shared/ or functions/', () => {
    const all = files.map((f) => f.text).join('\n');
    const unread: string[] = [];
    for (const [need, spec] of needSpecs) {
      for (const n of [...spec.env, ...(spec.optionalEnv ?? []), ...spec.secrets.map((s) => s.name), ...(spec.local?.env ?? [])]) {
        if (!new RegExp(`\\b${n}\\b`).test(all)) unread.push(`${n} (${need})`);
      }
    }
    expect(unread).toEqual([]);
  });
});

describe('local environment check (infra/local/stack.ts runs it at start)', () => {
  /** What the local stack sets: each need's local variables (or its own) and secret values. */
  function localEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [, spec] of needSpecs) {
      const local = spec.local ?? spec;
      for (const n of local.env) env[n] = 'x';
      for (const s of local.secrets) env[s.name] = 'x';
    }
    return env;
  }

  test('nothing missing when every need is served', () => {
    expect(missingLocalEnvironment(localEnv())).toEqual([]);
  });

  test('names a missing variable with its need and the functions that need it', () => {
    const env = { ...localEnv(), DDS_FILING_QUEUE_URL: '' };
    expect(missingLocalEnvironment(env)).toEqual([
      { variable: 'DDS_FILING_QUEUE_URL', need: 'dds-filing-queue:send', functions: ['generate-dds', 'amend-dds', 'withdraw-dds'] },
    ]);
  });

  test('a secret is set by its value or its ARN variable; a local stand-in replaces gfw', () => {
    const env = localEnv();
    delete env.LEDGER_SIGNER_KEY;
    expect([...new Set(missingLocalEnvironment(env).map((m) => m.variable))]).toEqual([
      'LEDGER_SIGNER_KEY (or LEDGER_SIGNER_KEY_SECRET_ARN)',
    ]);
    expect(missingLocalEnvironment({ ...env, LEDGER_SIGNER_KEY_SECRET_ARN: 'arn:x' })).toEqual([]);
    expect([env.GFW_API_URL, env.GFW_API_KEY]).toEqual([undefined, undefined]);
    expect(NEEDS.gfw.local.note).toContain('GFW');
  });
});
