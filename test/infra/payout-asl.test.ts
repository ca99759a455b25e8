/**
 * The payout state machine's ASL (statemachines/payout-lifecycle.asl.json, run by Step Functions in
 * AWS and by aws-local-stepfunctions locally) against the domain's retry policy
 * (shared/domain/payout-lifecycle.ts): MAX_ATTEMPTS attempts, RETRY_WAIT_SECONDS between them.
 *
 * Shape walked: AttemptN (waitForTaskToken task, Payload.attempt N) --Catch States.ALL-->
 * CheckAttemptN (task, Payload.attempt N) --> RouteAttemptN (Choice on $.check.outcome:
 * COMPLETED → PayoutCompleted, PENDING → AttemptN again, RETRY → RetryWaitN (Wait) → AttemptN+1,
 * anything else → ManualReview); the last attempt's RETRY goes to ManualReview.
 */
import { readFileSync } from 'node:fs';
import { payoutAslPath } from '../../infra/stack/payout-state-machine';
import { MAX_ATTEMPTS, RETRY_WAIT_SECONDS } from '../../shared/domain/payout-lifecycle';

type State = Record<string, any>;

const asl = JSON.parse(readFileSync(payoutAslPath(), 'utf8')) as { StartAt: string; States: Record<string, State> };

function state(name: string): State {
  const s = asl.States[name];
  if (!s) throw new Error(`ASL has no state ${name}`);
  return s;
}

/** The Next of a Choice rule testing `$.check.outcome` for `outcome`. */
function choiceFor(choice: State, outcome: string): string | undefined {
  return (choice.Choices as State[]).find((c) => c.Variable === '$.check.outcome' && c.StringEquals === outcome)?.Next;
}

/**
 * The first attempt, after the entry states that set the round (docs/api/payouts.md#manual-review): a Choice on
 * `$.round` (a resolution retry gives it) whose Default is a Pass making the input `{payout_id, round: 0}`
 * (Parameters, not `Result: 0`: the local interpreter treats a falsy Result as absent); both reach it.
 */
function firstAttempt(): string {
  const start = state(asl.StartAt);
  expect(start.Type).toBe('Choice');
  const given = (start.Choices as State[]).find((c) => c.Variable === '$.round' && c.IsPresent === true)!.Next as string;
  const pass = state(start.Default);
  expect(pass).toMatchObject({ Type: 'Pass', Parameters: { 'payout_id.$': '$.payout_id', round: 0 }, Next: given });
  expect(pass).not.toHaveProperty('ResultPath');
  return given;
}

/** Walks the retry path from StartAt: the attempts made and the waits between them. */
function retryPath(): { attempts: number[]; waits: number[]; exhaustedTo: string; completedTo: string[]; defaults: string[] } {
  const attempts: number[] = [];
  const waits: number[] = [];
  const completedTo: string[] = [];
  const defaults: string[] = [];
  let name = firstAttempt();
  for (let guard = 0; guard < 50; guard++) {
    const attempt = state(name);
    expect(attempt).toMatchObject({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken' });
    const n = attempt.Parameters.Payload.attempt as number;
    attempts.push(n);
    completedTo.push(attempt.Next);
    const onFailure = (attempt.Catch as State[]).find((c) => (c.ErrorEquals as string[]).includes('States.ALL'))!.Next as string;
    const check = state(onFailure);
    expect(check.Type).toBe('Task');
    expect(check.Parameters.Payload.attempt).toBe(n);
    const route = state(check.Next);
    expect(route.Type).toBe('Choice');
    expect(choiceFor(route, 'PENDING')).toBe(name); // still pending: wait for the same attempt again
    completedTo.push(choiceFor(route, 'COMPLETED')!);
    defaults.push(route.Default);
    const onRetry = choiceFor(route, 'RETRY')!;
    const next = state(onRetry);
    if (next.Type !== 'Wait') return { attempts, waits, exhaustedTo: onRetry, completedTo, defaults };
    waits.push(next.Seconds as number);
    name = next.Next as string;
  }
  throw new Error('ASL retry path does not end');
}

describe('payout lifecycle ASL', () => {
  const path = retryPath();

  test(`makes MAX_ATTEMPTS (${MAX_ATTEMPTS}) attempts, numbered 1…${MAX_ATTEMPTS}`, () => {
    expect(path.attempts).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
  });

  test(`waits RETRY_WAIT_SECONDS (${RETRY_WAIT_SECONDS.join('/')} s) between attempts`, () => {
    expect(path.waits).toEqual([...RETRY_WAIT_SECONDS]);
    expect(path.waits).toHaveLength(MAX_ATTEMPTS - 1);
  });

  test('exhausted retries (and any other outcome) go to manual review; every settlement to PayoutCompleted', () => {
    expect(new Set(path.defaults)).toEqual(new Set([path.exhaustedTo]));
    const review = state(path.exhaustedTo);
    expect(review.Type).toBe('Task');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an ASL definition substitution, filled in by CDK, not a template literal
    expect(review.Parameters.FunctionName).toBe('${PayoutManualReviewFunctionArn}');
    expect(new Set(path.completedTo)).toEqual(new Set(['PayoutCompleted']));
    expect(state('PayoutCompleted').Type).toBe('Succeed');
  });

  test('every attempt and check passes the round (attempt numbers 4·round + step, docs/api/payouts.md#manual-review)', () => {
    const tasks = Object.values(asl.States).filter((s) => s.Type === 'Task' && s.Parameters.Payload.attempt !== undefined);
    expect(tasks).toHaveLength(2 * MAX_ATTEMPTS);
    for (const t of tasks) expect(t.Parameters.Payload['round.$']).toBe('$.round');
  });

  test('a check is retried on any error, its timeout included, for about an hour, and nothing catches it: the execution never ends while the order is unknown', () => {
    // Failed before the fix: the checks retried only Lambda errors 5 times over ~1 min; a timed-out
    // check ended the execution and left the payout FAILED or RETRY_n for good.
    const checks = Object.entries(asl.States).filter(([name]) => /^CheckAttempt\d$/.test(name));
    expect(checks).toHaveLength(MAX_ATTEMPTS);
    for (const [, check] of checks) {
      expect(check.Catch).toBeUndefined();
      expect(check.Retry).toHaveLength(1);
      const r = check.Retry[0];
      expect(r.ErrorEquals).toEqual(['States.ALL']);
      let total = 0;
      for (let i = 0; i < r.MaxAttempts; i++) total += Math.min(r.IntervalSeconds * r.BackoffRate ** i, r.MaxDelaySeconds);
      expect(total).toBeGreaterThanOrEqual(3600);
    }
  });

  test('the Wait states are exactly those on the retry path', () => {
    const waits = Object.values(asl.States)
      .filter((s) => s.Type === 'Wait')
      .map((s) => s.Seconds as number);
    expect(waits.sort((a, b) => a - b)).toEqual([...RETRY_WAIT_SECONDS].sort((a, b) => a - b));
  });
});
