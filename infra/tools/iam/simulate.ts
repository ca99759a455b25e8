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
  account = TEST_ACCOUNT,
): Promise<IamDecision> {
  const taskResponse = TASK_RESPONSE_ACTIONS.has(request.action);
  const response = await runSimulation(
    {
      request: {
        principal,
        action: request.action,
        resource: { resource: taskResponse ? '*' : request.resource, accountId: account },
        contextVariables: request.context ?? {},
      },
      identityPolicies: policies.map((p) => ({
        name: p.name,
        policy: taskResponse ? asOwningStateMachine(p.policy, request.resource) : p.policy,
      })),
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

/**
 * The task-token callbacks of Step Functions. The service authorization reference lists no resource
 * type for them (the simulator accepts only `Resource: "*"`), yet AWS authorizes them against the
 * state machine that owns the task token: a grant on that state machine's ARN (what CDK's
 * `grantTaskResponse` writes) allows them, and a refusal names the state machine.
 */
const TASK_RESPONSE_ACTIONS = new Set(['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat']);

/**
 * `policy` as AWS evaluates a task-token callback on `stateMachineArn`: a statement whose resources
 * match that state machine applies to the callback, so for the simulator (which asks for `*`) its
 * resources become `*`; every other statement is unchanged.
 */
function asOwningStateMachine(policy: NamedPolicy['policy'], stateMachineArn: string): NamedPolicy['policy'] {
  return {
    ...policy,
    Statement: policy.Statement.map((st) => {
      const resources = ([] as unknown[]).concat(st.Resource ?? []);
      return resources.some((p) => typeof p === 'string' && globMatch(p, stateMachineArn)) ? { ...st, Resource: '*' } : st;
    }),
  };
}

/** IAM's wildcard match: `*` any run of characters, `?` one character, case-sensitive. */
export function globMatch(pattern: string, value: string): boolean {
  let re = GLOBS.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('')
        .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('')}$`,
      's',
    );
    GLOBS.set(pattern, re);
  }
  return re.test(value);
}
const GLOBS = new Map<string, RegExp>();
