/**
 * The bundle policy (docs/bundles.md), in one place: the benchmark (`BENCH_ONLY=bundles npm run
 * bench`, test/bench/bundles.ts) and test/infra/bundle-budget.test.ts apply it.
 *
 * 1. Cold load, the budget that counts: the time to `import()` a function's built bundle in a fresh
 *    Node process, as the Lambda runtime loads it (ESM, NODE_OPTIONS of infra/bundling.ts, the
 *    Powertools packages resolvable beside it as the Powertools layer provides them), median of
 *    several fresh processes. User-facing functions (API routes and the authorizer, on a caller's
 *    request path) get {@link USER_FACING_COLD_LOAD_BUDGET_MS}; workers (queues, state-machine
 *    tasks, schedules) {@link WORKER_COLD_LOAD_BUDGET_MS}. Budgets are for the 2-core machines CI
 *    runs on, shared and noisy (quiet medians 216–433 ms there, up to 1,540 ms under heavy load:
 *    docs/bundles.md); Lambda's own init is faster.
 * 2. Bytes only as a baseline that grows with a reason: infra/bundle-baseline.json holds each
 *    bundle's minified size with the reason of its last change; a bundle more than
 *    {@link BUNDLE_GROWTH_TOLERANCE} over it fails, asking to update the baseline with a reason
 *    (`npm run bundles:baseline -- --reason "…"`). Shrinking never fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHORIZER_FN, routes } from '../shared/manifest';
import { repoRoot } from '../shared/runtime/paths';

/** Cold-load budget (median ms) of a user-facing function: an API route's or the authorizer. */
export const USER_FACING_COLD_LOAD_BUDGET_MS = 1500;
/** Cold-load budget (median ms) of a worker: queue consumer, state-machine task, schedule. */
export const WORKER_COLD_LOAD_BUDGET_MS = 2500;
/** A bundle may grow this much (fraction) over its baseline before the reason must be written down. */
export const BUNDLE_GROWTH_TOLERANCE = 0.05;
/** The byte baseline, relative to the repository root. */
export const BUNDLE_BASELINE_PATH = 'infra/bundle-baseline.json';

/** True for the functions on a caller's request path: every route's function and the authorizer. */
export function isUserFacing(fn: string): boolean {
  return fn === AUTHORIZER_FN || routes.some((r) => r.fn === fn);
}

/** The cold-load budget (ms) of the function in `functions/<fn>/`. */
export function coldLoadBudgetMs(fn: string): number {
  return isUserFacing(fn) ? USER_FACING_COLD_LOAD_BUDGET_MS : WORKER_COLD_LOAD_BUDGET_MS;
}

/** Median of `xs` (the mean of the middle two for an even count). @throws Error on an empty list. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of nothing');
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One function's cold loads against its budget. */
export interface ColdLoadRow {
  fn: string;
  userFacing: boolean;
  /** Each fresh process's time to module loaded, ms. */
  loadsMs: number[];
  medianMs: number;
  budgetMs: number;
  /** `medianMs > budgetMs`. */
  over: boolean;
}

/** Measured loads → rows sorted by function name, each with its budget and verdict. */
export function checkColdLoads(loads: Iterable<{ fn: string; loadsMs: number[] }>): ColdLoadRow[] {
  return [...loads]
    .map(({ fn, loadsMs }) => {
      const medianMs = median(loadsMs);
      const budgetMs = coldLoadBudgetMs(fn);
      return { fn, userFacing: isUserFacing(fn), loadsMs, medianMs, budgetMs, over: medianMs > budgetMs };
    })
    .sort((a, b) => a.fn.localeCompare(b.fn));
}

/** infra/bundle-baseline.json: each function's bundle bytes and why it last changed. */
export interface BundleBaseline {
  functions: Record<string, { bytes: number; reason: string }>;
}

/** The committed baseline. */
export function readBundleBaseline(): BundleBaseline {
  return JSON.parse(readFileSync(join(repoRoot(), BUNDLE_BASELINE_PATH), 'utf8')) as BundleBaseline;
}

/** One bundle's bytes against its baseline. */
export interface BundleGrowthRow {
  fn: string;
  bytes: number;
  /** Undefined for a function the baseline does not know yet. */
  baselineBytes: number | undefined;
  /** `bytes / baselineBytes - 1` (0.031 = 3.1 % larger); undefined without a baseline. */
  growth: number | undefined;
  /** More bytes than `floor(baselineBytes × (1 + tolerance))`, or no baseline entry. */
  over: boolean;
}

/** Measured sizes against `baseline` → rows sorted by function name. */
export function checkBundleGrowth(sizes: Iterable<{ fn: string; bytes: number }>, baseline: BundleBaseline): BundleGrowthRow[] {
  return [...sizes]
    .map(({ fn, bytes }) => {
      const baselineBytes = baseline.functions[fn]?.bytes;
      const growth = baselineBytes === undefined ? undefined : bytes / baselineBytes - 1;
      const over = baselineBytes === undefined || bytes > Math.floor(baselineBytes * (1 + BUNDLE_GROWTH_TOLERANCE));
      return { fn, bytes, baselineBytes, growth, over };
    })
    .sort((a, b) => a.fn.localeCompare(b.fn));
}

/** The message of a bundle over its baseline: what grew, and how to record why. */
export function bundleGrowthMessage(r: BundleGrowthRow): string {
  const kb = (b: number) => (b / 1024).toFixed(1);
  const what =
    r.baselineBytes === undefined
      ? `${r.fn}: ${kb(r.bytes)} KB, not in ${BUNDLE_BASELINE_PATH}`
      : `${r.fn}: ${kb(r.bytes)} KB, ${(r.growth! * 100).toFixed(1)} % over its baseline of ${kb(r.baselineBytes)} KB (tolerance ${(BUNDLE_GROWTH_TOLERANCE * 100).toFixed(0)} %)`;
  return `${what}: if the growth has a reason, record it: npm run bundles:baseline -- --reason "<why>"`;
}

/** The report the benchmark prints: one line per function (cold load against budget, bytes against baseline), then a summary. */
export function formatBundleReport(loads: readonly ColdLoadRow[], growth: readonly BundleGrowthRow[]): string[] {
  const bytesOf = new Map(growth.map((g) => [g.fn, g]));
  const w = Math.max(8, ...loads.map((r) => r.fn.length));
  const lines = [`${'function'.padEnd(w)}  kind         cold load ms (median / budget)  bytes KB (baseline)  verdict`];
  for (const r of loads) {
    const g = bytesOf.get(r.fn);
    const bytes = g
      ? `${(g.bytes / 1024).toFixed(1)} (${g.baselineBytes === undefined ? 'none' : (g.baselineBytes / 1024).toFixed(1)})`
      : '';
    const verdicts = [r.over ? `SLOW by ${(r.medianMs - r.budgetMs).toFixed(0)} ms` : '', g?.over ? 'GREW over baseline' : ''].filter(
      Boolean,
    );
    lines.push(
      `${r.fn.padEnd(w)}  ${(r.userFacing ? 'user-facing' : 'worker').padEnd(11)}  ${`${r.medianMs.toFixed(0)} / ${r.budgetMs}`.padStart(30)}  ${bytes.padStart(19)}  ${verdicts.length ? `${verdicts.join(', ')}  <<<<<<<<<<` : 'ok'}`,
    );
  }
  const slow = loads.filter((r) => r.over).map((r) => r.fn);
  const grew = growth.filter((g) => g.over).map((g) => g.fn);
  lines.push(
    slow.length
      ? `${slow.length} of ${loads.length} functions over their cold-load budget: ${slow.join(', ')}`
      : `all ${loads.length} functions within their cold-load budget`,
  );
  lines.push(
    grew.length
      ? `${grew.length} bundles grew over their baseline: ${grew.join(', ')}`
      : `no bundle grew over its baseline (tolerance ${(BUNDLE_GROWTH_TOLERANCE * 100).toFixed(0)} %)`,
  );
  return lines;
}
