/**
 * The functions of one area (shared/function-areas.ts) in a nested stack: each function with its
 * role, policies, log group, static-files layer and event source mappings. The main stack keeps
 * the API (its methods and the authorizer), the state machine, the stateful resources and the
 * dashboard; CDK passes what an area's functions use from the main stack (table, queues, secrets,
 * keys, buckets, settings) as parameters of the nested stack, and what the main stack uses of them
 * (function ARNs and names) as outputs. See docs/deploy.md#what-the-stack-contains.
 */
import { CfnParameter, NestedStack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { FunctionArea } from '../../shared/function-areas';

/**
 * The most resources one area's nested template may hold (test/infra/function-areas.test.ts and
 * stages.test.ts, every area):
 * CloudFormation's limit is 500 per template, and a function costs 4 to 6 (function, role,
 * policy, log group, an event source mapping, a layer).
 */
export const AREA_TEMPLATE_RESOURCE_CEILING = 250;

/** `payout-provider-webhook` → `PayoutProviderWebhook` (construct ids). */
export function pascal(kebab: string): string {
  return kebab
    .split('-')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** One area's nested stack (construct id `Functions<Area>`, e.g. `FunctionsPayments`). */
export class FunctionAreaStack extends NestedStack {
  readonly area: FunctionArea;
  /** The environment every function gets, as this stack sees it (see {@link FunctionAreaStack.constructor}). */
  readonly commonEnvironment: Record<string, string>;

  /**
   * `commonEnvironment`: the main stack's values. A value that is not a literal is handed over as
   * an explicit parameter of this stack, evaluated in the main stack: such values may hold
   * conditions of the main template (`Fn::If` of the public and docs base URLs), which a nested
   * template cannot name.
   */
  constructor(scope: Construct, area: FunctionArea, commonEnvironment: Record<string, string>) {
    super(scope, `Functions${pascal(area)}`, { description: `Coffee trace: the functions of the ${area} area` });
    this.area = area;
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(commonEnvironment)) {
      if (!Token.isUnresolved(value)) {
        env[name] = value;
        continue;
      }
      const id = `Env${pascal(name.toLowerCase().replace(/_/g, '-'))}`;
      env[name] = new CfnParameter(this, id, { type: 'String', description: `${name} of every function` }).valueAsString;
      this.setParameter(id, value);
    }
    this.commonEnvironment = env;
  }
}
