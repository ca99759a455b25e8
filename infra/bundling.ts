/**
 * How every Lambda bundle is built, in one place: the CDK stack (NodejsFunction) and the benchmark
 * (plain esbuild) use these options, so both produce the same bundles.
 *
 * ESM output for nodejs22.x; a `require` shim in the banner for CommonJS dependencies bundled into
 * ESM; nothing external: each bundle carries (and pins) exactly the AWS SDK clients its function
 * imports instead of the runtime's copy.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { LogLevel, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { repoRoot } from '../shared/runtime/paths';

/** esbuild target matching the Lambda runtime (nodejs22.x). */
export const BUNDLE_TARGET = 'node22';

/** Lets CommonJS dependencies call `require` inside an ESM bundle. */
export const BUNDLE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Environment every bundled function runs with: stack traces mapped through the source maps. */
export const BUNDLE_RUNTIME_ENV: Readonly<Record<string, string>> = { NODE_OPTIONS: '--enable-source-maps' };

/**
 * Folder holding `<fn>/handler.ts`: `<repo>/functions`, or `$FUNCTIONS_ROOT` (for experiments with
 * scratch handlers). It must lie inside the repository, because NodejsFunction bundles from the
 * project root. @throws Error when FUNCTIONS_ROOT points outside the repository.
 */
export function functionsRoot(): string {
  const root = repoRoot();
  const override = process.env.FUNCTIONS_ROOT;
  if (!override) return join(root, 'functions');
  const dir = resolve(root, override);
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new Error(`FUNCTIONS_ROOT (${dir}) must be inside the repository (${root}): NodejsFunction bundles from there`);
  }
  return dir;
}

/** Absolute path of a function's entry: `functions/<fn>/handler.ts` (exporting `handler`). */
export function functionEntry(fn: string): string {
  return join(functionsRoot(), fn, 'handler.ts');
}

/** The functions among `fns` whose `handler.ts` does not exist yet, sorted. */
export function missingFunctionEntries(fns: Iterable<string>): string[] {
  return [...new Set(fns)].filter((fn) => !existsSync(functionEntry(fn))).sort();
}

/** NodejsFunction's project settings: bundle from the repo root, with its npm lockfile. */
export function nodejsProject(): { projectRoot: string; depsLockFilePath: string } {
  const root = repoRoot();
  return { projectRoot: root, depsLockFilePath: join(root, 'package-lock.json') };
}

/** The SDK's default credential chain, replaced in Lambda bundles by the environment provider. */
export const CREDENTIAL_PROVIDER_MODULE = '@aws-sdk/credential-provider-node';
export const CREDENTIAL_PROVIDER_STAND_IN = './infra/lambda/credential-provider.ts';

/** The CDK bundling options of every function (local esbuild, never Docker). */
export function lambdaBundling(): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: BUNDLE_TARGET,
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: BUNDLE_BANNER,
    externalModules: [],
    esbuildArgs: { [`--alias:${CREDENTIAL_PROVIDER_MODULE}`]: CREDENTIAL_PROVIDER_STAND_IN },
    forceDockerBundling: false,
    logLevel: LogLevel.WARNING,
  };
}

/**
 * The same bundle as {@link lambdaBundling}, as plain esbuild options: `entryPath` (absolute or
 * repo-relative) → `outfile` (ESM, with `outfile + '.map'` beside it).
 */
export function esbuildOptionsFor(entryPath: string, outfile: string): BuildOptions {
  return {
    entryPoints: [resolve(repoRoot(), entryPath)],
    outfile,
    absWorkingDir: repoRoot(),
    bundle: true,
    format: 'esm',
    target: BUNDLE_TARGET,
    platform: 'node',
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: { js: BUNDLE_BANNER },
    external: [],
    alias: { [CREDENTIAL_PROVIDER_MODULE]: resolve(repoRoot(), CREDENTIAL_PROVIDER_STAND_IN) },
    logLevel: 'warning',
  };
}
