/**
 * One construct that fixes the defaults of every function of the service, so no handler's
 * infrastructure differs by accident: nodejs22.x on arm64, X-Ray active tracing, an explicit log
 * group with one month of retention, the shared esbuild bundling, its own role with only explicit
 * policies (no AWS managed policy), and the environment every function needs.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AssetHashType, DockerImage, Duration, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  LayerVersion,
  ParamsAndSecretsLayerVersion,
  type ILayerVersion,
  ParamsAndSecretsVersions,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import {
  BUNDLE_RUNTIME_ENV,
  FUNCTION_LAYER_FILES,
  functionEntry,
  lambdaBundling,
  nodejsProject,
  powertoolsLayerParameter,
  powertoolsVersion,
} from '../bundling';

/** The Lambda runtime of every function (esbuild target `node22` matches it; package.json `engines` admits it). */
export const FUNCTION_RUNTIME = Runtime.NODEJS_22_X;

/** Props of {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Function folder: `functions/<fn>/handler.ts`. */
  fn: string;
  /** What the function does (manifest `summary`). */
  description: string;
  /** Default 10 s. */
  timeout?: Duration;
  /** MiB; default 512. */
  memorySize?: number;
  /** Added to the common environment. */
  environment?: Record<string, string>;
  /**
   * Attach the AWS Parameters and Secrets Lambda Extension: shared/config.ts `secret()` reads
   * Secrets Manager through it (cached, and no SDK client in the bundle).
   */
  readsSecrets?: boolean;
}

/** A bundled Lambda function with the service's defaults; `fn.role` takes the grants. */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** Function folder name. */
  readonly name: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.name = props.fn;

    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    // Own role, explicit policies: the log group's write actions instead of AWSLambdaBasicExecutionRole.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `coffee-trace ${props.fn}`,
    });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    this.fn = new NodejsFunction(this, 'Function', {
      entry: functionEntry(props.fn),
      handler: 'handler',
      ...nodejsProject(),
      bundling: lambdaBundling(),
      layers: [
        powertoolsLayer(this),
        ...(FUNCTION_LAYER_FILES[props.fn] ? [staticFilesLayer(this, props.fn, FUNCTION_LAYER_FILES[props.fn]!)] : []),
      ],
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      role: this.role,
      description: props.description.slice(0, 256),
      environment: { ...BUNDLE_RUNTIME_ENV, ...props.environment },
      ...(props.readsSecrets
        ? {
            paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, {
              cacheSize: 20,
              httpPort: 2773,
            }),
          }
        : {}),
    });

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the X-Ray statement added by active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) uses Resource "*": X-Ray has no resource-level permissions. All other statements name their resources.',
    });
    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x deliberately: the bundles are built and tested for node22 (esbuild target), and it is a supported Lambda runtime. Moving to a newer runtime is a reviewed change, not an automatic one.',
    });
  }
}

/**
 * The official Powertools for AWS Lambda (TypeScript) layer at the installed version, one per app stack:
 * its ARN is resolved at deploy time from the public SSM parameter AWS publishes per release and
 * region, so the functions load exactly the Logger, Metrics and Tracer (with aws-xray-sdk-core)
 * they were tested with, and the bundles leave them out (infra/bundling.ts BUNDLE_EXTERNALS).
 */
function powertoolsLayer(scope: Construct): ILayerVersion {
  // The top-level stack's: functions in nested stacks (infra/stack/function-areas.ts) receive its ARN as a parameter, one SSM lookup in all.
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  const id = 'PowertoolsLayer';
  const existing = stack.node.tryFindChild(id) as ILayerVersion | undefined;
  if (existing) return existing;
  return LayerVersion.fromLayerVersionArn(
    stack,
    id,
    StringParameter.valueForStringParameter(stack, powertoolsLayerParameter(powertoolsVersion())),
  );
}

/**
 * A layer holding a function's static files (`/opt/<to>`; infra/bundling.ts FUNCTION_LAYER_FILES),
 * assembled locally at synth time (no Docker): the function's own code asset stays within its
 * bundle budget.
 */
function staticFilesLayer(scope: Construct, fn: string, files: ReadonlyArray<{ from: string; to: string }>): LayerVersion {
  const root = nodejsProject().projectRoot;
  return new LayerVersion(scope, 'StaticFiles', {
    description: `coffee-trace ${fn}: static files read at run time`,
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(root, {
      assetHash: createHash('sha256')
        .update(
          files
            .map(
              (f) =>
                `${f.to}:${createHash('sha256')
                  .update(readFileSync(join(root, f.from)))
                  .digest('hex')}`,
            )
            .join('\n'),
        )
        .digest('hex'),
      assetHashType: AssetHashType.CUSTOM,
      bundling: {
        image: DockerImage.fromRegistry('none'), // never pulled: local bundling below always succeeds
        local: {
          tryBundle(outputDir: string) {
            for (const f of files) {
              mkdirSync(dirname(join(outputDir, f.to)), { recursive: true });
              copyFileSync(join(root, f.from), join(outputDir, f.to));
            }
            return true;
          },
        },
      },
    }),
  });
}
