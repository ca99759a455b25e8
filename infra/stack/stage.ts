/**
 * Deploy stages from CDK context: `cdk deploy -c stage=dev|prod` (default `dev`). A stage fixes
 * the stack name (so both stages can live in one account), log retention, what happens to data
 * when a resource leaves the stack, the table's point-in-time recovery window, stack termination
 * protection and whether alarms are created (infra/stack/settings.ts `alarmsEnabled`).
 *
 * The data policy is applied by {@link applyStage}, an aspect over the whole stack, so resources
 * added by any construct (table, secrets, buckets, log groups) follow the stage without each
 * construct knowing about stages.
 */
import { Aspects, RemovalPolicy, type Stack, type IAspect } from 'aws-cdk-lib';
import { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { CfnLogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct, IConstruct } from 'constructs';

/** The deploy stages. */
const STAGE_NAMES = ['dev', 'prod'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** Stage used when no `-c stage=` is given. */
const DEFAULT_STAGE: StageName = 'dev';

/** What a stage decides. */
export interface StageConfig {
  name: StageName;
  /**
   * CloudFormation stack name (and cdk.out/<name>.template.json): dev keeps the historical
   * `CoffeeTrace` (tools read cdk.out/CoffeeTrace.template.json), prod is `CoffeeTrace-prod`, so
   * both can live in one account and region.
   */
  stackName: string;
  /** Retention of every log group (functions, API access logs, state machine), in days. */
  logRetention: RetentionDays;
  /**
   * Removal policy of data: the table and the secrets (and any S3 bucket). prod RETAIN; dev
   * DESTROY (test data; a deleted secret stays recoverable for Secrets Manager's 30-day window).
   */
  dataRemovalPolicy: RemovalPolicy;
  /** Removal policy of log groups: prod RETAIN (evidence after a stack is deleted), dev DESTROY. */
  logRemovalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection on the table. */
  tableDeletionProtection: boolean;
  /** Point-in-time recovery window of the table, in days (1–35; PITR is on in every stage). */
  pitrRecoveryDays: number;
  /** CloudFormation termination protection of the stack. */
  terminationProtection: boolean;
  /**
   * Create the CloudWatch alarms (and the ops topic they notify): on in every stage by default, so
   * a dev deployment shows what production will alarm on; context `alarms=off` turns them off for a
   * deployment where failures are expected (see readStage).
   */
  alarmsEnabled: boolean;
}

/** The stages. */
export const STAGES: Readonly<Record<StageName, StageConfig>> = {
  dev: {
    name: 'dev',
    stackName: 'CoffeeTrace',
    logRetention: RetentionDays.ONE_WEEK,
    dataRemovalPolicy: RemovalPolicy.DESTROY,
    logRemovalPolicy: RemovalPolicy.DESTROY,
    tableDeletionProtection: false,
    pitrRecoveryDays: 7,
    terminationProtection: false,
    alarmsEnabled: true,
  },
  prod: {
    name: 'prod',
    stackName: 'CoffeeTrace-prod',
    logRetention: RetentionDays.THREE_MONTHS,
    dataRemovalPolicy: RemovalPolicy.RETAIN,
    logRemovalPolicy: RemovalPolicy.RETAIN,
    tableDeletionProtection: true,
    pitrRecoveryDays: 35,
    terminationProtection: true,
    alarmsEnabled: true,
  },
};

/**
 * The stage named by context `stage` (`-c stage=prod`); {@link DEFAULT_STAGE} when absent.
 * Context `alarms` (`on`/`off`) overrides the stage's `alarmsEnabled`.
 * Context `stackName` overrides the stage's stack name (e.g. `-c stage=prod -c stackName=CoffeeTrace`
 * keeps a stack deployed before stages existed as the prod stage).
 * @throws Error naming the valid stages when the context value is another one, or when
 *   `stackName` is not a valid CloudFormation stack name.
 */
export function readStage(scope: Construct): StageConfig {
  const raw = scope.node.tryGetContext('stage') as unknown;
  const name = raw === undefined || raw === null || raw === '' ? DEFAULT_STAGE : String(raw).toLowerCase();
  if (!(STAGE_NAMES as readonly string[]).includes(name)) {
    throw new Error(`context stage must be one of ${STAGE_NAMES.join(', ')} (got ${JSON.stringify(raw)})`);
  }
  const alarmsRaw = scope.node.tryGetContext('alarms') as unknown;
  const alarms = alarmsRaw === undefined || alarmsRaw === null || alarmsRaw === '' ? undefined : String(alarmsRaw).toLowerCase();
  if (alarms !== undefined && !['on', 'off', 'true', 'false'].includes(alarms))
    throw new Error(`context alarms must be on or off (got ${JSON.stringify(alarmsRaw)})`);
  const stage = { ...STAGES[name as StageName], ...(alarms === undefined ? {} : { alarmsEnabled: alarms === 'on' || alarms === 'true' }) };
  const stackName = scope.node.tryGetContext('stackName') as unknown;
  if (stackName === undefined || stackName === null || stackName === '' || stackName === stage.stackName) return stage;
  if (typeof stackName !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) {
    throw new Error(
      `context stackName must be a CloudFormation stack name (a letter, then letters, digits and -) (got ${JSON.stringify(stackName)})`,
    );
  }
  return { ...stage, stackName };
}

/** Applies the stage's data and log policies to every resource of the stack (see the file comment). */
export function applyStage(stack: Stack, stage: StageConfig): void {
  Aspects.of(stack).add(new StagePolicy(stage));
  stack.tags.setTag('coffee-trace:stage', stage.name);
}

/** The aspect behind {@link applyStage}. */
class StagePolicy implements IAspect {
  constructor(private readonly stage: StageConfig) {}

  visit(node: IConstruct): void {
    const s = this.stage;
    if (node instanceof CfnTable) {
      node.applyRemovalPolicy(s.dataRemovalPolicy);
      node.deletionProtectionEnabled = s.tableDeletionProtection;
      node.pointInTimeRecoverySpecification = { pointInTimeRecoveryEnabled: true, recoveryPeriodInDays: s.pitrRecoveryDays };
    } else if (node instanceof CfnSecret) {
      node.applyRemovalPolicy(s.dataRemovalPolicy);
    } else if (node instanceof CfnBucket) {
      // A bucket with objects cannot be deleted by CloudFormation: DESTROY would fail the stack
      // deletion, so buckets are retained in every stage unless their construct empties them.
      if (s.dataRemovalPolicy !== RemovalPolicy.DESTROY) node.applyRemovalPolicy(s.dataRemovalPolicy);
    } else if (node instanceof CfnLogGroup) {
      node.retentionInDays = s.logRetention;
      node.applyRemovalPolicy(s.logRemovalPolicy);
    }
  }
}
