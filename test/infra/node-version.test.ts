import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_TARGET } from '../../infra/bundling';
import { FUNCTION_RUNTIME } from '../../infra/stack/service-function';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * One Node.js version story (docs/contributing.md "Node.js versions"): the functions run on the Lambda
 * runtime, esbuild builds the bundles for that same major version, and package.json `engines` (the
 * Node.js that runs the tools, the tests and the local stack) admits it, so the code is tested on a
 * version no newer than the one it ships to.
 */
describe('Node.js versions', () => {
  const runtimeMajor = Number(/^nodejs(\d+)\.x$/.exec(FUNCTION_RUNTIME.name)?.[1]);
  const engines = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

  it('bundles for the Lambda runtime it deploys to', () => {
    expect(runtimeMajor).toBeGreaterThan(0);
    expect(BUNDLE_TARGET).toBe(`node${runtimeMajor}`);
  });

  it('states a lower bound in engines that the Lambda runtime satisfies', () => {
    // A plain lower bound (">=20.19"); another form of range needs this test to learn it.
    const floor = /^>=(\d+)\.(\d+)(?:\.\d+)?$/.exec(engines);
    expect(floor).not.toBeNull();
    expect(Number(floor![1])).toBeLessThanOrEqual(runtimeMajor);
  });

  it('runs the tests on a Node.js that engines admits', () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const floor = /^>=(\d+)\.(\d+)/.exec(engines)!;
    expect(major > Number(floor[1]) || (major === Number(floor[1]) && minor >= Number(floor[2]))).toBe(true);
  });
});
