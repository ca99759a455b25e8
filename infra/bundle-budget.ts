/**
 * Size budgets of the Lambda bundles, in one place: the benchmark (`BENCH_ONLY=bundles npm run
 * bench`) and test/infra/bundle-budget.test.ts use these, and they apply the same rule as the
 * outside structure check (dependency-check.py after `npm run synth`), which sums the
 * .js/.mjs/.cjs files of each function's asset directory in cdk.out.
 *
 * - 600 KB for functions that sign or read the chain (viem), build or validate DDS XML
 *   (xmlbuilder2, xmllint-wasm) or carry evidence to IPFS. The outside check recognises them by
 *   their CDK logical id: {@link HEAVY_FUNCTION_PATTERN}.
 * - 300 KB for every other function.
 *
 * Sizes are the minified JavaScript only (the bundle file, not its source map or the
 * `.LEGAL.txt` licence file beside it); 1 KB = 1024 bytes; a bundle is over when its size
 * exceeds `budget × 1024` bytes.
 */

/** Budget of a function whose logical id matches {@link HEAVY_FUNCTION_PATTERN}, in KB. */
export const HEAVY_BUNDLE_BUDGET_KB = 600;
/** Budget of every other function, in KB. */
export const STANDARD_BUNDLE_BUDGET_KB = 300;

/**
 * The outside check's pattern over a function's CDK logical id (e.g.
 * `ServiceGetBatchAuditFunctionB53DAB63`), copied verbatim: ledger, audit, chain events, DDS,
 * custody stages, trace log, evidence/IPFS and the later slices' names. Note that it goes by
 * name, so create-purchase-order, get-dds and ledger-write-reconciler get 600 KB although they
 * neither sign nor read the chain nor build DDS XML (chain-events-webhook reads the chain).
 */
const HEAVY_FUNCTION_PATTERN =
  /Ledger|Audit|ChainEvent|Dds|Stage|Trace|Anchor|Vault|Loan|Buyer|Deposit|Ramp|PurchaseOrder|Settle|Evidence|Ipfs/i;

/**
 * A function folder's construct id in the stack (`get-batch-audit` → `GetBatchAudit`), the part
 * of its logical id (`Service` + id + `Function` + hash) that the pattern can match: neither
 * `Service`, `Function` nor a hex hash contains or completes one of its words, which
 * test/infra/bundle-budget.test.ts checks against the synthesized stack's logical ids.
 */
export function functionConstructId(fn: string): string {
  return fn.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
}

/** The budget (KB) of a function with this CDK logical id: the outside check's rule. */
export function budgetKbForLogicalId(logicalId: string): number {
  return HEAVY_FUNCTION_PATTERN.test(logicalId) ? HEAVY_BUNDLE_BUDGET_KB : STANDARD_BUNDLE_BUDGET_KB;
}

/** The budget (KB) of the function in `functions/<fn>/`. */
export function bundleBudgetKb(fn: string): number {
  return budgetKbForLogicalId(functionConstructId(fn));
}

/** The pattern word that gives `fn` the larger budget (`'ChainEvent'`), or undefined. */
function heavyBudgetReason(fn: string): string | undefined {
  return HEAVY_FUNCTION_PATTERN.exec(functionConstructId(fn))?.[0];
}

/** One measured bundle against its budget. */
export interface BundleBudgetRow {
  fn: string;
  /** Bytes of the minified bundle (JavaScript files only). */
  bytes: number;
  budgetKb: number;
  /** `bytes > budgetKb × 1024`. */
  over: boolean;
}

/** Measured sizes → rows sorted by function name, each with its budget and verdict. */
export function checkBundleBudgets(sizes: Iterable<{ fn: string; bytes: number }>): BundleBudgetRow[] {
  return [...sizes]
    .map(({ fn, bytes }) => {
      const budgetKb = bundleBudgetKb(fn);
      return { fn, bytes, budgetKb, over: bytes > budgetKb * 1024 };
    })
    .sort((a, b) => a.fn.localeCompare(b.fn));
}

/**
 * The report the benchmark prints: one line per function (size, budget with the pattern word
 * behind a 600 KB one, then headroom or a loud `OVER` by how much), then a summary line that says
 * how many are over.
 */
export function formatBundleBudgetReport(rows: readonly BundleBudgetRow[]): string[] {
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  const budget = (r: BundleBudgetRow) => `${r.budgetKb}${heavyBudgetReason(r.fn) ? ` (${heavyBudgetReason(r.fn)})` : ''}`;
  const w = Math.max(8, ...rows.map((r) => r.fn.length));
  const wb = Math.max(6, ...rows.map((r) => budget(r).length));
  const lines = [`${'function'.padEnd(w)}  ${'size KB'.padStart(8)}  ${'budget'.padEnd(wb)}  verdict`];
  for (const r of rows) {
    const diff = r.bytes - r.budgetKb * 1024;
    const verdict = r.over ? `OVER by ${kb(diff)} KB  <<<<<<<<<<` : `ok, ${kb(-diff)} KB left`;
    lines.push(`${r.fn.padEnd(w)}  ${kb(r.bytes).padStart(8)}  ${budget(r).padEnd(wb)}  ${verdict}`);
  }
  const over = rows.filter((r) => r.over);
  lines.push(over.length
    ? `${over.length} of ${rows.length} bundles OVER budget: ${over.map((r) => r.fn).join(', ')}`
    : `all ${rows.length} bundles within budget`);
  return lines;
}
