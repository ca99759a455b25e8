import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * No hand-written source file over 600 lines: a file that long holds more than one idea and
 * is split by meaning. Generated files (the typed client, anything under a `generated` path)
 * are exempt; there is no exception list.
 */

const root = join(__dirname, '..', '..');
const MAX_LINES = 600;

function isGenerated(path: string): boolean {
  return path.startsWith('clients/typescript/') || path.includes('generated');
}

/** Tracked and untracked (not ignored) TypeScript and JavaScript sources of the repository. */
function sourceFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  return out
    .split('\n')
    .filter((p) => /\.(ts|tsx|mts|cts|js|cjs|mjs)$/.test(p))
    .filter((p) => !isGenerated(p));
}

function lineCount(path: string): number {
  let text: string;
  try {
    text = readFileSync(join(root, path), 'utf8');
  } catch {
    return 0; // deleted in the work tree but still in the index
  }
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file size', () => {
  const sizes = sourceFiles().map((path) => ({ path, lines: lineCount(path) }));

  it('finds the sources', () => {
    expect(sizes.length).toBeGreaterThan(100);
    expect(sizes.some((s) => s.path === 'shared/adapters/dynamodb/payout-repo.ts')).toBe(true);
  });

  it(`no hand-written source file is over ${MAX_LINES} lines`, () => {
    const over = sizes.filter((s) => s.lines > MAX_LINES).map((s) => `${s.path} (${s.lines})`);
    expect(over).toEqual([]);
  });
});
