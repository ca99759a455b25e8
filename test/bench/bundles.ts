import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build, type Metafile } from 'esbuild';
import {
  BUNDLE_BASELINE_PATH,
  BUNDLE_GROWTH_TOLERANCE,
  bundleGrowthMessage,
  checkBundleGrowth,
  checkColdLoads,
  formatBundleReport,
  readBundleBaseline,
  type BundleBaseline,
  type BundleGrowthRow,
  type ColdLoadRow,
} from '../../infra/bundle-policy';
import { BUNDLE_RUNTIME_ENV, esbuildOptionsFor, functionEntry } from '../../infra/bundling';
import { AUTHORIZER_FN, routes, workers } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * `BENCH_ONLY=bundles npm run bench`: every function bundle (built with the esbuild options of
 * infra/bundling.ts, the bundle CDK builds) against the bundle policy of infra/bundle-policy.ts:
 * its cold-load time (median of BENCH_COLD_LOADS fresh processes, default 7, taken in rounds over
 * all functions) against its budget,
 * and its bytes against infra/bundle-baseline.json. Sets a non-zero exit code when a function is
 * over its cold-load budget or a bundle grew over its baseline. About a minute on 2 cores.
 * `npm run bundles:baseline -- --reason "…"` writes the baseline from the bundles as built now.
 */

const run = promisify(execFile);
const say = (l: string) => process.stdout.write(`${l}\n`);
const isCode = (name: string) => /\.(?:mjs|cjs|js)$/.test(name);

/** Bytes of the .js/.mjs/.cjs files under `dir` (recursively): the code the function loads, not its source map or licence file. */
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

/** Built bundles in a temporary folder: `<dir>/<fn>/index.mjs`, with `<dir>/node_modules` for the Powertools packages. */
export interface BuiltBundles {
  dir: string;
  file(fn: string): string;
  sizes: Array<{ fn: string; bytes: number }>;
  /** esbuild's metafile of each bundle (its inputs and their imports). */
  metafiles: Map<string, Metafile>;
  remove(): void;
}

/**
 * Builds each function of `fns` into its own folder under a new temporary directory (esbuild
 * options of infra/bundling.ts) and measures its bytes. `<dir>/node_modules` links to the
 * repository's node_modules, so the bundle resolves the packages it leaves out (Powertools) the
 * way it does in Lambda from the Powertools layer's `/opt/nodejs/node_modules`.
 */
export async function buildBundles(fns: readonly string[]): Promise<BuiltBundles> {
  const dir = mkdtempSync(join(tmpdir(), 'coffee-bundles-'));
  const file = (fn: string) => join(dir, fn, 'index.mjs');
  try {
    symlinkSync(join(repoRoot(), 'node_modules'), join(dir, 'node_modules'), 'dir');
    const metafiles = new Map<string, Metafile>();
    const sizes = await Promise.all(
      fns.map(async (fn) => {
        const { metafile } = await build({ ...esbuildOptionsFor(functionEntry(fn), file(fn)), metafile: true });
        metafiles.set(fn, metafile!);
        return { fn, bytes: codeBytes(join(dir, fn)) };
      }),
    );
    return { dir, file, sizes, metafiles, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** What the fresh process runs: import the bundle as the Lambda runtime does, print the ms to module loaded. */
const LOADER = [
  'const started = performance.now();',
  'const m = await import(process.argv[1]);',
  'const ms = performance.now() - started;',
  "if (typeof m.handler !== 'function') throw new Error('the bundle exports no handler');",
  'process.stdout.write(String(ms));',
].join('\n');

/**
 * Time to module loaded (ms) of the bundle `file`, in `runs` fresh Node processes one after the
 * other: `import()` of the ESM file with the function's NODE_OPTIONS (infra/bundling.ts
 * BUNDLE_RUNTIME_ENV, source maps on as in Lambda), an AWS region and function name as Lambda
 * sets them, and nothing else of this process's environment.
 * @throws Error when a load fails (the bundle cannot start) or exports no `handler`.
 */
export async function coldLoadsMs(fn: string, file: string, runs: number): Promise<number[]> {
  const env = {
    PATH: process.env.PATH ?? '',
    ...BUNDLE_RUNTIME_ENV,
    AWS_REGION: 'eu-west-1',
    AWS_LAMBDA_FUNCTION_NAME: fn,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const loads: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', LOADER, file], { env });
    loads.push(Number(stdout));
  }
  return loads;
}

/** Prints the table and the summary; returns the rows. Sets `process.exitCode = 1` when a function is slow or a bundle grew. */
export async function bundleBench(): Promise<{ loads: ColdLoadRow[]; growth: BundleGrowthRow[] }> {
  const fns = deployedFunctions();
  const runs = Number(process.env.BENCH_COLD_LOADS ?? 7);
  say(
    `\nfunction bundles (esbuild options of infra/bundling.ts; policy of infra/bundle-policy.ts): cold load = median of ${runs} fresh processes`,
  );
  const built = await buildBundles(fns);
  try {
    // Round-robin, one load of each function per round: a burst of load on the shared machine
    // then slows one load of many functions instead of every load of one.
    const measured = new Map(fns.map((fn) => [fn, [] as number[]]));
    for (let round = 0; round < runs; round++) {
      for (const fn of fns) measured.get(fn)!.push(...(await coldLoadsMs(fn, built.file(fn), 1)));
    }
    const loads = checkColdLoads([...measured].map(([fn, loadsMs]) => ({ fn, loadsMs })));
    const growth = checkBundleGrowth(built.sizes, readBundleBaseline());
    for (const line of formatBundleReport(loads, growth)) say(`  ${line}`);
    for (const g of growth.filter((r) => r.over)) say(`  ${bundleGrowthMessage(g)}`);
    if (loads.some((r) => r.over) || growth.some((r) => r.over)) process.exitCode = 1;
    return { loads, growth };
  } finally {
    built.remove();
  }
}

/**
 * `npm run bundles:baseline -- --reason "…"`: writes infra/bundle-baseline.json from the bundles as
 * built now. A function whose size changed takes `reason`; the others keep theirs. The reason is
 * required when a bundle grew over the tolerance or is new.
 */
async function writeBaseline(reason: string | undefined): Promise<void> {
  let previous: BundleBaseline = { functions: {} };
  try {
    previous = readBundleBaseline();
  } catch {
    /* first baseline */
  }
  const built = await buildBundles(deployedFunctions());
  try {
    const grew = checkBundleGrowth(built.sizes, previous).filter((r) => r.over);
    if (grew.length && !reason) {
      throw new Error(
        `a reason is required: ${grew.map((g) => g.fn).join(', ')} grew more than ${BUNDLE_GROWTH_TOLERANCE * 100} % or are new (--reason "<why>")`,
      );
    }
    const functions: BundleBaseline['functions'] = {};
    for (const { fn, bytes } of [...built.sizes].sort((a, b) => a.fn.localeCompare(b.fn))) {
      const before = previous.functions[fn];
      functions[fn] = {
        bytes,
        reason: before && before.bytes === bytes ? before.reason : (reason ?? `resized within ${BUNDLE_GROWTH_TOLERANCE * 100} %`),
      };
    }
    writeFileSync(join(repoRoot(), BUNDLE_BASELINE_PATH), `${JSON.stringify({ functions }, null, 2)}\n`);
    say(`wrote ${BUNDLE_BASELINE_PATH} (${built.sizes.length} functions)`);
  } finally {
    built.remove();
  }
}

if (process.argv[1]?.endsWith('bundles.ts') && process.argv.includes('--write-baseline')) {
  const i = process.argv.indexOf('--reason');
  writeBaseline(i > 0 ? process.argv[i + 1] : undefined).catch((err: unknown) => {
    process.stderr.write(`bundles:baseline failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
