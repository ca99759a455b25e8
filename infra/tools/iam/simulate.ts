/**
 * Evaluates one request against a role's identity policies with @cloud-copilot/iam-simulate (an
 * AGPL dev dependency: tests and tools only, never a Lambda bundle), the way IAM would for a
 * same-account call with no resource policy: allowed when an Allow statement matches and no Deny
 * does. Answers which statement decided, for messages and reports.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { TEST_ACCOUNT, type NamedPolicy } from './role-policies';

/** One request: an action on a resource ARN, with its condition context (e.g. `dynamodb:LeadingKeys`). */
export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

/** The statement that decided: its policy, position and Sid (if any), and the statement itself. */
interface DecidingStatement {
  policy: string;
  index: number;
  sid?: string;
  effect: 'Allow' | 'Deny';
  statement: unknown;
}

/** The decision on one request. */
export interface IamDecision {
  allowed: boolean;
  result: 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';
  /** The Deny that refused it, or the (first) Allow that allowed it; undefined when nothing matched. */
  decidingStatement?: DecidingStatement;
}

/**
 * The decision of IAM on `request` made by a principal holding `policies` (its identity
 * policies), in account {@link TEST_ACCOUNT}. `principal` is the role's ARN (only for
 * principal-scoped condition keys). @throws Error when the simulator rejects the input (an
 * unknown action, a resource of the wrong type for it, a context key the action does not have):
 * a request that cannot be evaluated is a bug in the caller, never a silent denial.
 */
export async function evaluate(
  policies: readonly NamedPolicy[],
  request: IamRequest,
  principal = `arn:aws:iam::${TEST_ACCOUNT}:role/function-role`,
): Promise<IamDecision> {
  const response = await runSimulation(
    {
      request: {
        principal,
        action: request.action,
        resource: { resource: request.resource, accountId: TEST_ACCOUNT },
        contextVariables: request.context ?? {},
      },
      identityPolicies: policies.map((p) => ({ name: p.name, policy: p.policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (response.resultType === 'error')
    throw new Error(`iam-simulate rejected ${request.action} on ${request.resource}: ${JSON.stringify(response.errors)}`);
  const result = response.resultType === 'single' ? response.result : response.results[0];
  const analysis = result?.analysis?.identityAnalysis;
  const overall = response.overallResult;
  const pick =
    overall === 'ExplicitlyDenied' ? analysis?.denyStatements[0] : overall === 'Allowed' ? analysis?.allowStatements[0] : undefined;
  return {
    allowed: overall === 'Allowed',
    result: overall,
    ...(pick
      ? {
          decidingStatement: {
            policy: pick.policyId,
            index: pick.statement.index(),
            ...(pick.statement.sid() ? { sid: pick.statement.sid()! } : {}),
            effect: overall === 'Allowed' ? 'Allow' : 'Deny',
            statement: pick.statement.toJSON(),
          },
        }
      : {}),
  } as IamDecision;
}
