/**
 * How every Lambda bundle is built, in one place: the CDK stack (NodejsFunction) and the benchmark
 * (plain esbuild) use these options, so both produce the same bundles.
 *
 * ESM output for nodejs22.x; a `require` shim in the banner for CommonJS dependencies bundled into
 * ESM; each bundle carries (and pins) exactly the AWS SDK clients its function imports instead of
 * the runtime's copy (the one exception, a part no client of ours can reach, is
 * {@link BUNDLE_EXTERNALS}). Licence comments go to `index.mjs.LEGAL.txt` beside the bundle and
 * non-ASCII text is written as UTF-8 rather than `\u` escapes, so the JavaScript the function loads
 * is only code. The bundle policy (cold-load budgets, byte baseline): ./bundle-policy.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { LogLevel, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { repoRoot } from '../shared/runtime/paths';
import { SCALAR_LAYER_FILE } from '../shared/http/docs-page';

/** esbuild target matching the Lambda runtime (nodejs22.x). */
export const BUNDLE_TARGET = 'node22';

/** Lets CommonJS dependencies call `require` inside an ESM bundle. */
export const BUNDLE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * The npm scope of Powertools for AWS Lambda (Logger, Metrics, Tracer, Batch). In AWS its packages come
 * from the official Powertools layer (infra/stack/service-function.ts `powertoolsLayer`), the way
 * the Powertools documentation recommends for esbuild bundles: the bundle leaves them out and the
 * layer, at exactly the version in package-lock.json, provides them under `/opt/nodejs/node_modules`.
 * Tracer alone (with aws-xray-sdk-core) would add about 120 KB to every bundle.
 */
const POWERTOOLS_PACKAGE_SCOPE = '@aws-lambda-powertools';

/**
 * Left out of every bundle: the Powertools packages (see {@link POWERTOOLS_PACKAGE_SCOPE}), and
 * `@smithy/core/event-streams`, which the SDK's protocol layer imports
 * only lazily (`await import(...)` in HttpProtocol.loadEventStreamCapability) for operations with an
 * event-stream member, such as S3 SelectObjectContent or Bedrock streaming. None of the clients the
 * functions use (DynamoDB, SQS, SNS, Step Functions) has such an operation, so that import is never
 * evaluated; bundling it cost about 19 KB per function. If a function ever adds a client with
 * event streams, remove this entry (the call would otherwise fail with ERR_MODULE_NOT_FOUND).
 */
export const BUNDLE_EXTERNALS: readonly string[] = ['@smithy/core/event-streams', `${POWERTOOLS_PACKAGE_SCOPE}/*`];

/**
 * The Powertools packages the functions import; all must be installed at one version (one shared
 * `commons`). Every one is in the official layer (its `generic/all` build holds commons, logger,
 * metrics, tracer, batch, idempotency, parameters, jmespath and parser), so all stay out of the bundles.
 */
export const POWERTOOLS_PACKAGES = ['logger', 'metrics', 'tracer', 'batch'] as const;

/**
 * The installed Powertools version (`2.35.0`), read from node_modules, which `npm ci` fills from the
 * lockfile: the version of the layer the functions load in AWS.
 * @throws Error when the packages are not all at the same version.
 */
export function powertoolsVersion(): string {
  const versions = new Set(
    POWERTOOLS_PACKAGES.map(
      (p) =>
        (
          JSON.parse(readFileSync(join(repoRoot(), 'node_modules', POWERTOOLS_PACKAGE_SCOPE, p, 'package.json'), 'utf8')) as {
            version: string;
          }
        ).version,
    ),
  );
  if (versions.size !== 1) throw new Error(`Powertools packages must share one version; installed: ${[...versions].join(', ')}`);
  return [...versions][0]!;
}

/**
 * The public SSM parameter holding the ARN of the official Powertools layer of `version` in the
 * deploying region (published by AWS for every release and region; by design: no layer of ours).
 */
export function powertoolsLayerParameter(version: string): string {
  return `/aws/service/powertools/typescript/generic/all/${version}`;
}

/** Licence comments (`/*! ... *\/`, `@license`) go to `<bundle>.LEGAL.txt`, not into the code. */
export const BUNDLE_LEGAL_COMMENTS = 'external';

/** Non-ASCII text stays UTF-8 (`"→"`, 3 bytes) instead of escapes (`"\u2192"`, 6); Node reads .mjs as UTF-8. */
export const BUNDLE_CHARSET = 'utf8';

/** Environment every bundled function runs with: stack traces mapped through the source maps. */
export const BUNDLE_RUNTIME_ENV: Readonly<Record<string, string>> = { NODE_OPTIONS: '--enable-source-maps' };

/**
 * Folder holding `<fn>/handler.ts`: `<repo>/functions`, or `$FUNCTIONS_ROOT` (for experiments with
 * scratch handlers). It must lie inside the repository, because NodejsFunction bundles from the
 * project root. @throws Error when FUNCTIONS_ROOT points outside the repository.
 */
function functionsRoot(): string {
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
const CREDENTIAL_PROVIDER_MODULE = '@aws-sdk/credential-provider-node';
const CREDENTIAL_PROVIDER_STAND_IN = './infra/lambda/credential-provider.ts';
/** The DynamoDB client's endpoint-discovery cache, never consulted here (see infra/lambda/endpoint-cache.ts). */
const ENDPOINT_CACHE_MODULE = '@aws-sdk/endpoint-cache';
const ENDPOINT_CACHE_STAND_IN = './infra/lambda/endpoint-cache.ts';

/**
 * Static files a function reads at run time, shipped in a Lambda layer of their own (`/opt/<to>`)
 * rather than in the function's code asset, by function: GET /docs/scalar.js serves Scalar's
 * standalone renderer (about 4 MB, far over any bundle budget, and no code of the function) from
 * `/opt/scalar/standalone.js` (shared/http/docs-page.ts SCALAR_LAYER_FILE).
 */
export const FUNCTION_LAYER_FILES: Readonly<Record<string, ReadonlyArray<{ from: string; to: string }>>> = {
  'get-docs': [{ from: 'node_modules/@scalar/api-reference/dist/browser/standalone.js', to: SCALAR_LAYER_FILE }],
};

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
    externalModules: [...BUNDLE_EXTERNALS],
    esbuildArgs: {
      [`--alias:${CREDENTIAL_PROVIDER_MODULE}`]: CREDENTIAL_PROVIDER_STAND_IN,
      [`--alias:${ENDPOINT_CACHE_MODULE}`]: ENDPOINT_CACHE_STAND_IN,
      '--legal-comments': BUNDLE_LEGAL_COMMENTS,
      // As an argument, not the `charset` prop: aws-cdk-lib 2.276's local bundling ignores that prop.
      '--charset': BUNDLE_CHARSET,
    },
    forceDockerBundling: false,
    logLevel: LogLevel.WARNING,
  };
}

/**
 * The same bundle as {@link lambdaBundling}, as plain esbuild options: `entryPath` (absolute or
 * repo-relative) → `outfile` (ESM, with `outfile + '.map'` and `outfile + '.LEGAL.txt'` beside it).
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
    charset: BUNDLE_CHARSET,
    legalComments: BUNDLE_LEGAL_COMMENTS,
    mainFields: ['module', 'main'],
    banner: { js: BUNDLE_BANNER },
    external: [...BUNDLE_EXTERNALS],
    alias: {
      [CREDENTIAL_PROVIDER_MODULE]: resolve(repoRoot(), CREDENTIAL_PROVIDER_STAND_IN),
      [ENDPOINT_CACHE_MODULE]: resolve(repoRoot(), ENDPOINT_CACHE_STAND_IN),
    },
    logLevel: 'warning',
  };
}
