/**
 * Bundle budgets (infra/bundle-budget.ts) and what infra/bundling.ts leaves out of the bundles:
 * - the budget rule on known names, and against the logical ids of the real stack (built with
 *   bundling skipped, so it takes seconds);
 * - every function bundle, built with the esbuild options of infra/bundling.ts (about 15 s, no
 *   synth): a module in BUNDLE_EXTERNALS may be reached only through a lazy `import()`, never a
 *   static import (that would fail at cold start);
 * - every bundle within its budget (`BENCH_ONLY=bundles npm run bench` prints the same table with
 *   each function's headroom).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { build, type Metafile } from 'esbuild';
import {
  budgetKbForLogicalId,
  bundleBudgetKb,
  checkBundleBudgets,
  formatBundleBudgetReport,
  functionConstructId,
  HEAVY_BUNDLE_BUDGET_KB,
  STANDARD_BUNDLE_BUDGET_KB,
} from '../../infra/bundle-budget';
import { BUNDLE_CHARSET, BUNDLE_EXTERNALS, BUNDLE_LEGAL_COMMENTS, esbuildOptionsFor, functionEntry, lambdaBundling } from '../../infra/bundling';
import { CoffeeTraceStack } from '../../infra/stack/coffee-trace-stack';
import { deployedFunctions } from '../bench/bundles';

jest.setTimeout(120_000);

describe('budget rule', () => {
  test.each([
    ['ledger-writer', 600], ['get-batch-audit', 600], ['update-batch-stage', 600], ['confirm-purchase-order', 600],
    ['generate-dds', 600], ['dds-filer', 600], ['get-dds-xml', 600], ['get-dds', 600], ['get-dds-evidence', 600],
    // by name only (the outside check's pattern), although they neither sign nor read the chain
    ['chain-events-webhook', 600], ['create-purchase-order', 600], ['ledger-write-reconciler', 600],
    ['register-farmer', 300], ['submit-batch', 300], ['create-farmer-payout', 300], ['payout-reconciler', 300],
    ['payout-provider-webhook', 300], ['create-cooperative', 300], ['update-cooperative', 300], ['get-batch', 300],
    ['authorizer', 300], ['get-docs', 300], ['verify-gfw', 300], ['national-registry-check', 300],
  ])('%s: %i KB', (fn, kb) => {
    expect(bundleBudgetKb(fn)).toBe(kb);
  });

  test('logical ids: the outside check reads the same budget from the stack as bundleBudgetKb from the folder name', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } }); // no bundling: seconds, not minutes
    const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
    expect([...stack.functions.keys()].sort()).toEqual(deployedFunctions());
    for (const [fn, f] of stack.functions) {
      const logicalId = stack.getLogicalId(f.fn.node.defaultChild as CfnResource);
      expect(logicalId).toContain(functionConstructId(fn));
      expect({ fn, budget: budgetKbForLogicalId(logicalId) }).toEqual({ fn, budget: bundleBudgetKb(fn) });
    }
  });

  test('over means more than budget × 1024 bytes; the report marks it and counts', () => {
    const rows = checkBundleBudgets([
      { fn: 'get-batch', bytes: STANDARD_BUNDLE_BUDGET_KB * 1024 },
      { fn: 'submit-batch', bytes: STANDARD_BUNDLE_BUDGET_KB * 1024 + 1 },
      { fn: 'ledger-writer', bytes: HEAVY_BUNDLE_BUDGET_KB * 1024 + 1 },
      { fn: 'get-batch-audit', bytes: 500 * 1024 },
    ]);
    expect(rows.map((r) => [r.fn, r.budgetKb, r.over])).toEqual([
      ['get-batch', 300, false], ['get-batch-audit', 600, false], ['ledger-writer', 600, true], ['submit-batch', 300, true],
    ]);
    const report = formatBundleBudgetReport(rows);
    expect(report.filter((l) => /\bOVER by\b/.test(l)).map((l) => l.split(/\s+/)[0])).toEqual(['ledger-writer', 'submit-batch']);
    expect(report.at(-1)).toBe('2 of 4 bundles OVER budget: ledger-writer, submit-batch');
    expect(formatBundleBudgetReport(rows.filter((r) => !r.over)).at(-1)).toBe('all 2 bundles within budget');
  });
});

describe('bundling options', () => {
  test('the esbuild options mirror the CDK ones for charset, licence comments and externals', () => {
    const cdk = lambdaBundling();
    const plain = esbuildOptionsFor(functionEntry('get-batch'), '/tmp/out/index.mjs');
    expect(cdk.esbuildArgs?.['--charset']).toBe(BUNDLE_CHARSET);
    expect(plain.charset).toBe(BUNDLE_CHARSET);
    expect(cdk.esbuildArgs?.['--legal-comments']).toBe(BUNDLE_LEGAL_COMMENTS);
    expect(plain.legalComments).toBe(BUNDLE_LEGAL_COMMENTS);
    expect(cdk.externalModules).toEqual([...BUNDLE_EXTERNALS]);
    expect(plain.external).toEqual([...BUNDLE_EXTERNALS]);
  });
});

describe('every function bundle', () => {
  const sizes: Array<{ fn: string; bytes: number }> = [];
  const staticExternal: string[] = [];
  const powertoolsInside: string[] = [];
  let out: string;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'bundle-budget-'));
    await Promise.all(deployedFunctions().map(async (fn) => {
      const file = join(out, fn, 'index.mjs');
      const { metafile } = await build({ ...esbuildOptionsFor(functionEntry(fn), file), metafile: true, logLevel: 'error' });
      sizes.push({ fn, bytes: statSync(file).size });
      for (const [input, { imports }] of Object.entries((metafile as Metafile).inputs)) {
        if (/node_modules\/(@aws-lambda-powertools|aws-xray-sdk-core)\//.test(input)) powertoolsInside.push(`${fn}: ${input}`);
        for (const i of imports) {
          if (i.external && BUNDLE_EXTERNALS.includes(i.path) && i.kind !== 'dynamic-import') staticExternal.push(`${fn}: ${input} → ${i.path} (${i.kind})`);
        }
      }
    }));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test('reach BUNDLE_EXTERNALS only through import(), never statically', () => {
    expect(sizes).toHaveLength(deployedFunctions().length);
    expect(staticExternal).toEqual([]);
  });

  test('leave Powertools (and the X-Ray SDK under its Tracer) to the Powertools layer: none of its code is in a bundle', () => {
    expect(powertoolsInside).toEqual([]);
  });

  test('are within their budgets', () => {
    const over = checkBundleBudgets(sizes).filter((r) => r.over);
    expect(over.map((r) => `${r.fn} ${(r.bytes / 1024).toFixed(1)} KB > ${r.budgetKb} KB`)).toEqual([]);
  });
});
