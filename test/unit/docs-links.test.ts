import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { functionManifest, NEEDS, UNDECLARED_ENV } from '../../shared/manifest';

/**
 * The documentation holds together: every relative link inside README.md and docs/ opens an
 * existing file and, when it names one, an existing heading (GitHub's anchor rules); every
 * `docs/….md#anchor` or `README.md#anchor` a source file cites exists; and no source file cites
 * a document that is not in the repository.
 */

const root = join(__dirname, '..', '..');
const SKIP_DIRS = new Set(['node_modules', 'cdk.out', '.git', '.local', 'test-output', 'coverage']);
const SOURCE_EXT = /\.(ts|js|cjs|mjs|json|sol|sh)$/;

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, keep, out);
    else if (keep(full)) out.push(full);
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a markdown file: its headings (outside code fences), duplicates numbered as GitHub numbers them. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = githubSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(file: string): Set<string> {
  if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
  return anchorCache.get(file)!;
}

/** Why `target` (a path with an optional #anchor, relative to `base`) does not resolve, or null. */
function problemOf(base: string, target: string): string | null {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file = path === '' ? base : resolve(dirname(base), path);
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined || anchor === '' || !file.endsWith('.md')) return null;
  return anchorsOfFile(file).has(decodeURIComponent(anchor)) ? null : `no heading #${anchor} in ${relative(root, file)}`;
}

const markdownFiles = [join(root, 'README.md'), ...walk(join(root, 'docs'), (f) => f.endsWith('.md'))];
const sourceFiles = ['shared', 'functions', 'infra', 'test', 'statemachines', '.ci']
  .filter((d) => existsSync(join(root, d)))
  .flatMap((d) => walk(join(root, d), (f) => SOURCE_EXT.test(f) || f.endsWith('/run')));

/** Relative links of a markdown file, outside code fences and inline code. */
function linksOf(markdown: string): string[] {
  const links: string[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

describe('documentation links', () => {
  it('finds the README and the docs pages', () => {
    expect(markdownFiles.length).toBeGreaterThan(10);
    expect(sourceFiles.length).toBeGreaterThan(200);
  });

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('2. Ledger signer and contracts')).toBe('2-ledger-signer-and-contracts');
    expect(githubSlug('Chain events in AWS: the scheduled watcher')).toBe('chain-events-in-aws-the-scheduled-watcher');
    expect(githubSlug('Environment of the Lambda functions (set by the CDK stack)')).toBe(
      'environment-of-the-lambda-functions-set-by-the-cdk-stack',
    );
    expect(githubSlug('The `npm start` stack')).toBe('the-npm-start-stack');
    expect([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
  });

  it('resolves every relative link of README.md and docs/ to a file and heading', () => {
    const problems = markdownFiles.flatMap((file) =>
      linksOf(readFileSync(file, 'utf8'))
        .map((target) => ({ target, problem: problemOf(file, target) }))
        .filter((l) => l.problem !== null)
        .map((l) => `${relative(root, file)}: (${l.target}) ${l.problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('resolves every docs/….md#anchor and README.md#anchor a source file cites', () => {
    const cites = sourceFiles
      .filter((f) => !f.endsWith('docs-links.test.ts'))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/(?<![\w./-])((?:docs\/[\w./-]+\.md|README\.md)(?:#[\w-]+)?)/g)].map((m) => ({
          file,
          target: m[1]!,
        })),
      );
    expect(cites.length).toBeGreaterThan(100);
    const problems = cites
      .map((c) => ({ ...c, problem: problemOf(join(root, 'README.md'), c.target) }))
      .filter((c) => c.problem !== null)
      .map((c) => `${relative(root, c.file)}: ${c.target}: ${c.problem}`);
    expect(problems).toEqual([]);
  });

  it('cites no document outside the repository (code, comments and the OpenAPI texts alike)', () => {
    // The two tests that look for such citations name the pattern they look for.
    const generated = new Set(['clients/typescript/api-types.d.ts', 'test/unit/openapi-lint.test.ts']);
    const outside = /decisions §|decisions \\u00a7|decisions\.md|interface-spec/;
    const offenders = sourceFiles
      .map((f) => relative(root, f))
      .filter((f) => f !== 'test/unit/docs-links.test.ts' && !generated.has(f))
      .filter((f) => outside.test(readFileSync(join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});

describe('the configuration tables', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const configuration = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
  const named = (text: string, variable: string) => new RegExp(`\`(?:[^\`]*[ ,/])?${variable}(?:[ ,/][^\`]*)?\``).test(text);

  it("docs/configuration.md names every variable the stack gives a function in AWS (the manifest's needs); README or it every tunable", () => {
    const optional = Object.values(NEEDS).flatMap((n) => ('optionalEnv' in n ? (n.optionalEnv as readonly string[]) : []));
    const aws = new Set([...functionManifest().flatMap((f) => f.env), ...optional]);
    // Set by the runtime or Powertools conventions, not settings of the service.
    for (const v of ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'LOG_LEVEL', 'AWS_NODEJS_CONNECTION_REUSE_ENABLED'])
      aws.delete(v);
    expect(aws.size).toBeGreaterThan(40);
    expect([...aws].filter((v) => !named(configuration, v)).sort()).toEqual([]);
    // The tunables the stack does not set (code defaults) are in one table or the other.
    const tunables = Object.entries(UNDECLARED_ENV)
      .filter(([, why]) => why.startsWith('tunable'))
      .map(([v]) => v);
    expect(tunables.length).toBeGreaterThan(5);
    expect(tunables.filter((v) => !named(configuration, v) && !named(readme, v)).sort()).toEqual([]);
  });

  it("README.md names the variables of npm start the local needs add (the local stack's own settings)", () => {
    const local = [
      'PORT',
      'LOCAL_DATA_DIR',
      'LOCAL_TIME_SCALE',
      'PAYOUT_WEBHOOK_SECRET',
      'CHAIN_WEBHOOK_SECRET',
      'ONRAMP_WEBHOOK_SECRET',
      'PUBLIC_BASE_URL',
      'MANUAL_PAYOUT_DAILY_LIMIT_USDC',
      'ANCHOR_INTERVAL_S',
    ];
    expect(local.filter((v) => !named(readme, v))).toEqual([]);
    // Every need's secret has its variable in one table or the other.
    const secrets = Object.values(NEEDS).flatMap((n) =>
      (n.secrets as readonly { name: string; arnVariable: string }[]).map((s) => s.arnVariable),
    );
    expect(secrets.filter((v) => !named(configuration, v) && !named(readme, v)).sort()).toEqual([]);
  });
});
