/**
 * `npm run iam-report -- [decisions.ndjson] [--strict-resources] [--json]`: each function's
 * granted IAM actions that no exercised call used (infra/tools/iam/unused-grants.ts).
 *
 * Reads the exercised calls from the file given, else from LOCAL_IAM_DECISIONS_FILE (the local
 * stack's IAM enforcement appends one line per evaluated call there), and the role policies of
 * the stack synthesized in-process with cdk.json's context (as `npm run synth` would, without
 * bundling the functions). Prints the report (or JSON with --json); exit code 0.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CoffeeTraceStack } from '../stack/coffee-trace-stack';
import { repoRoot } from '../../shared/runtime/paths';
import { rolePolicies, type NamedPolicy } from './iam/role-policies';
import { formatUnusedGrants, parseExercisedCalls, unusedGrants } from './iam/unused-grants';

/** Every function's identity policies, from the stack synthesized in-process. */
function synthesizedRolePolicies(): Record<string, NamedPolicy[]> {
  const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  // Bundling skipped: roles do not depend on the bundles' bytes.
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  const template = Template.fromStack(stack).toJSON();
  const roles = Object.fromEntries(
    [...stack.functions].map(([fn, f]) => [fn, stack.getLogicalId(f.role.node.defaultChild as CfnResource)]),
  );
  return rolePolicies(template, roles);
}

function main(argv: string[]): void {
  const file = argv.find((a) => !a.startsWith('--')) ?? process.env.LOCAL_IAM_DECISIONS_FILE;
  if (!file) {
    console.error('usage: npm run iam-report -- <decisions.ndjson> [--strict-resources] [--json] (or set LOCAL_IAM_DECISIONS_FILE)');
    process.exit(2);
  }
  const calls = parseExercisedCalls(readFileSync(file, 'utf8'));
  const report = unusedGrants(synthesizedRolePolicies(), calls, { strictResources: argv.includes('--strict-resources') });
  console.log(argv.includes('--json') ? JSON.stringify(report, null, 2) : formatUnusedGrants(report));
}

main(process.argv.slice(2));
