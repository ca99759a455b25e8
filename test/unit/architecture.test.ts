import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The dependency rule (docs/architecture.md#layers-and-the-dependency-rule; .dependency-cruiser.cjs): domain pure, use cases on
 * ports only, handlers without adapters, transport without adapters, no cycles. dependency-cruiser
 * reads every import (type-only ones too) of shared/, functions/ and infra/.
 */

const root = join(__dirname, '..', '..');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function cruise(): { violations: Violation[]; modules: number } {
  const bin = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const r = spawnSync(
    process.execPath,
    [bin, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', 'shared', 'functions', 'infra'],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0 && !r.stdout) throw new Error(`dependency-cruiser failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  return { violations: out.summary.violations, modules: out.summary.totalCruised };
}

describe('the dependency rule', () => {
  const result = cruise();

  it('cruises the whole service (every handler, use case, adapter and the infrastructure)', () => {
    expect(result.modules).toBeGreaterThan(150);
  });

  it('has no violation: each one is printed as rule: from → to', () => {
    expect(result.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });

  it('configures every layer rule', () => {
    const config = readFileSync(join(root, '.dependency-cruiser.cjs'), 'utf8');
    for (const rule of [
      'domain-is-pure',
      'use-cases-use-ports',
      'handlers-not-adapters',
      'adapters-implement-ports',
      'transport-not-adapters',
      'no-circular',
    ]) {
      expect(config).toContain(`name: '${rule}'`);
    }
  });
});
