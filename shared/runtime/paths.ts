import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The repository root, for local tooling only (the local stack, scripts, tests): the nearest
 * folder at or above the working directory whose package.json is this project's. Lambda code
 * never calls it.
 */
export function repoRoot(): string {
  let dir = resolve(process.env.REPO_ROOT ?? process.cwd());
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'coffee-trace-payout') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('repoRoot: run from inside the coffee-trace-payout checkout');
    dir = up;
  }
}
