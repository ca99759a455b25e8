import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { checkBundleBudgets, formatBundleBudgetReport, functionConstructId, type BundleBudgetRow } from '../../infra/bundle-budget';
import { esbuildOptionsFor, functionEntry } from '../../infra/bundling';
import { AUTHORIZER_FN, routes, workers } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * `BENCH_ONLY=bundles npm run bench`: the minified size of every function bundle against its
 * budget (infra/bundle-budget.ts), built with the esbuild options of infra/bundling.ts (the same
 * bundle CDK builds; no synth, no local stack, about 15 s). Counted like the outside check counts
 * cdk.out: the .js/.mjs/.cjs files of the function's output folder (not the source map or the
 * licence file). `BENCH_BUNDLE_SOURCE=cdk.out` measures the assets of the last `npm run synth`
 * instead. Sets a non-zero exit code when a bundle is over budget.
 */

const say = (l: string) => process.stdout.write(`${l}\n`);
const isCode = (name: string) => /\.(?:mjs|cjs|js)$/.test(name);

/** Bytes of the .js/.mjs/.cjs files under `dir` (recursively). */
function codeBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += codeBytes(p);
    else if (isCode(e.name)) total += statSync(p).size;
  }
  return total;
}

/** Every deployed function folder: the routes' and workers' `fn`s and the authorizer. */
export function deployedFunctions(): string[] {
  return [...new Set([...routes.map((r) => r.fn), ...workers.map((w) => w.fn), AUTHORIZER_FN])].sort();
}

/** Builds each function into its own folder under a temporary directory and measures it. */
async function measureWithEsbuild(fns: readonly string[]): Promise<Array<{ fn: string; bytes: number }>> {
  const out = mkdtempSync(join(tmpdir(), 'coffee-bundles-'));
  try {
    return await Promise.all(fns.map(async (fn) => {
      const dir = join(out, fn);
      await build(esbuildOptionsFor(functionEntry(fn), join(dir, 'index.mjs')));
      return { fn, bytes: codeBytes(dir) };
    }));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Sizes of the function assets in cdk.out/CoffeeTrace.template.json, as the outside check reads them. */
function measureCdkOut(fns: readonly string[]): Array<{ fn: string; bytes: number }> {
  const root = join(repoRoot(), 'cdk.out');
  const templatePath = join(root, 'CoffeeTrace.template.json');
  if (!existsSync(templatePath)) throw new Error(`${templatePath} is missing: run npm run synth first`);
  const template = JSON.parse(readFileSync(templatePath, 'utf8')) as { Resources: Record<string, { Type: string; Properties?: { Code?: { S3Key?: unknown } } }> };
  const byId = new Map(fns.map((fn) => [functionConstructId(fn), fn]));
  const sizes: Array<{ fn: string; bytes: number }> = [];
  for (const [logicalId, r] of Object.entries(template.Resources)) {
    if (r.Type !== 'AWS::Lambda::Function') continue;
    const fn = byId.get(/^Service(.+)Function[0-9A-F]{8}$/.exec(logicalId)?.[1] ?? '');
    const key = r.Properties?.Code?.S3Key;
    if (!fn || typeof key !== 'string') throw new Error(`cdk.out: cannot map ${logicalId} to a function folder`);
    sizes.push({ fn, bytes: codeBytes(join(root, `asset.${key.split('.')[0]}`)) });
  }
  return sizes;
}

/** Prints the table and the summary; returns the rows. Sets `process.exitCode = 1` when any is over. */
export async function bundleBench(): Promise<BundleBudgetRow[]> {
  const fns = deployedFunctions();
  const fromCdkOut = process.env.BENCH_BUNDLE_SOURCE === 'cdk.out';
  say(`\nfunction bundles (minified ESM; ${fromCdkOut ? 'assets in cdk.out' : 'esbuild options of infra/bundling.ts'}; budgets of infra/bundle-budget.ts)`);
  const rows = checkBundleBudgets(fromCdkOut ? measureCdkOut(fns) : await measureWithEsbuild(fns));
  for (const line of formatBundleBudgetReport(rows)) say(`  ${line}`);
  if (rows.some((r) => r.over)) process.exitCode = 1;
  return rows;
}
