/**
 * The least-privilege report (infra/tools/iam/unused-grants.ts) on a hand-made NDJSON file of
 * exercised calls (test/fixtures/iam/decisions.ndjson) and hand-made role policies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NamedPolicy } from '../../infra/tools/iam/role-policies';
import { formatUnusedGrants, parseExercisedCalls, unusedGrants } from '../../infra/tools/iam/unused-grants';
import { repoRoot } from '../../shared/runtime/paths';

const fixture = readFileSync(join(repoRoot(), 'test/fixtures/iam/decisions.ndjson'), 'utf8');

const policies: Record<string, NamedPolicy[]> = {
  'get-batch': [
    {
      name: 'GetBatchPolicy',
      policy: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
            Resource: [
              'arn:aws:dynamodb:eu-west-1:111122223333:table/Table',
              'arn:aws:dynamodb:eu-west-1:111122223333:table/Table/index/*',
            ],
          },
          { Effect: 'Deny', Action: ['dynamodb:DeleteItem'], Resource: '*' },
        ],
      },
    },
  ],
  'update-batch-stage': [
    {
      name: 'UpdateBatchStagePolicy',
      policy: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: 's3:PutObject', Resource: ['arn:aws:s3:::evidence/car/*', 'arn:aws:s3:::evidence/files/*'] },
          { Effect: 'Allow', Action: ['kms:GenerateDataKey*'], Resource: 'arn:aws:kms:eu-west-1:111122223333:key/k' },
          { Effect: 'Allow', Sid: 'Sms', Action: 'sns:Publish', NotResource: 'arn:aws:sns:*:*:*' },
        ],
      },
    },
  ],
  'get-openapi': [],
};

describe('exercised calls', () => {
  test('one object per line, blank lines skipped', () => {
    const calls = parseExercisedCalls(fixture);
    expect(calls).toHaveLength(5);
    expect(calls[0]).toEqual({
      fn: 'get-batch',
      action: 'dynamodb:GetItem',
      resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/coffee-trace',
      allowed: true,
    });
  });

  test('a malformed line is refused with its number', () => {
    expect(() => parseExercisedCalls('{"fn":"a","action":"x","resource":"r","allowed":true}\nnot json')).toThrow('line 2: not JSON');
    expect(() => parseExercisedCalls('{"fn":"a","action":"x"}')).toThrow('line 1: want');
  });
});

describe('unused grants', () => {
  test("each Allow statement's actions no allowed call used, per function; denies and refused calls do not count", () => {
    const report = unusedGrants(policies, parseExercisedCalls(fixture));
    expect(report.map((r) => r.fn)).toEqual(['get-batch', 'get-openapi', 'update-batch-stage']);
    const byFn = Object.fromEntries(report.map((r) => [r.fn, r]));
    expect(byFn['get-batch']!.calls).toBe(2);
    expect(byFn['get-batch']!.unused.map((u) => [u.policy, u.statement, u.action])).toEqual([
      ['GetBatchPolicy', 0, 'dynamodb:BatchGetItem'],
    ]);
    // The refused kms call is not a use of kms:GenerateDataKey*.
    expect(byFn['update-batch-stage']!.unused.map((u) => u.action)).toEqual(['kms:GenerateDataKey*', 'sns:Publish']);
    expect(byFn['update-batch-stage']!.unused[1]).toMatchObject({ sid: 'Sms', resources: ['NOT arn:aws:sns:*:*:*'] });
    expect(byFn['get-openapi']).toEqual({ fn: 'get-openapi', calls: 0, unused: [] });
  });

  test("with strict resources a call must also hit one of the statement's resources", () => {
    const calls = parseExercisedCalls(fixture);
    const strict = Object.fromEntries(
      unusedGrants(policies, calls, { strictResources: true }).map((r) => [r.fn, r.unused.map((u) => u.action)]),
    );
    // The local table ARN is not the template's: nothing of get-batch's read statement is used.
    expect(strict['get-batch']).toEqual(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']);
    // The PutObject hit car/*, one of the statement's resources.
    expect(strict['update-batch-stage']).toEqual(['kms:GenerateDataKey*', 'sns:Publish']);
  });

  test('the text report names the function, the statement and the action', () => {
    const text = formatUnusedGrants(unusedGrants(policies, parseExercisedCalls(fixture)));
    expect(text).toContain('get-batch (2 allowed calls seen): 1 granted action never used');
    expect(text).toContain(
      '  dynamodb:BatchGetItem  [GetBatchPolicy statement 0] on arn:aws:dynamodb:eu-west-1:111122223333:table/Table, arn:aws:dynamodb:eu-west-1:111122223333:table/Table/index/*',
    );
    expect(text).toContain('get-openapi (0 allowed calls seen): every granted action used');
  });
});
