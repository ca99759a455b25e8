/**
 * The payout lifecycle (docs/api/payouts.md#payout-lifecycle): the ASL file in `statemachines/`, loaded unchanged (the
 * local interpreter runs the same file), with its `${...}` placeholders substituted by the ARNs of
 * the worker functions the manifest (shared/manifest.ts) names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { repoRoot } from '../../shared/runtime/paths';

/** Absolute path of the payout lifecycle's ASL file. */
export function payoutAslPath(): string {
  return join(repoRoot(), 'statemachines', 'payout-lifecycle.asl.json');
}

/** The `${Name}` definition-substitution placeholders used in an ASL text, sorted and unique. */
export function aslPlaceholders(asl: string): string[] {
  return [...new Set([...asl.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!))].sort();
}

/** Name of the payout state machine in a stack (fixed, so its ARN is known before it exists). */
export function payoutStateMachineName(stack: Stack): string {
  return `${stack.stackName}-payout-lifecycle`;
}

/**
 * ARN of the payout state machine, formatted from its name rather than referenced: functions the
 * state machine invokes also call back into it (SendTaskSuccess), and a reference would be a cycle.
 */
export function payoutStateMachineArn(stack: Stack): string {
  return stack.formatArn({
    service: 'states',
    resource: 'stateMachine',
    resourceName: payoutStateMachineName(stack),
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** Props of {@link PayoutStateMachine}. */
export interface PayoutStateMachineProps {
  /** Function per ASL substitution key (manifest `WorkerDef.substitution`). */
  tasks: Record<string, IFunction>;
}

/** Standard state machine, logging ALL events (without execution data) and traced with X-Ray. */
export class PayoutStateMachine extends Construct {
  readonly stateMachine: StateMachine;

  /** @throws Error when the ASL's placeholders and the task functions given differ. */
  constructor(scope: Construct, id: string, props: PayoutStateMachineProps) {
    super(scope, id);
    const asl = readFileSync(payoutAslPath(), 'utf8');
    const placeholders = aslPlaceholders(asl);
    const keys = Object.keys(props.tasks).sort();
    if (placeholders.join() !== keys.join()) {
      throw new Error(
        `payout-lifecycle.asl.json uses placeholders [${placeholders.join(', ')}] but the manifest's workers provide [${keys.join(', ')}]`,
      );
    }
    const stack = Stack.of(this);

    // Unnamed (a fixed name would collide with the retained group when the stack is re-created).
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName: payoutStateMachineName(stack),
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(asl),
      definitionSubstitutions: Object.fromEntries(Object.entries(props.tasks).map(([k, f]) => [k, f.functionArn])),
      logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    // Invoke exactly the unqualified ARNs the ASL names (grantInvoke would add `<arn>:*`).
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: Object.values(props.tasks).map((f) => f.functionArn),
      }),
    );

    Validations.of(this.stateMachine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Statements added by the StateMachine construct for X-Ray tracing (xray:PutTraceSegments etc.) and CloudWatch Logs delivery (logs:CreateLogDelivery etc.): neither API supports resource-level permissions. Lambda invoke is limited to the three task functions.',
    });
  }
}
