/**
 * `npm run iam-report -- [decisions.ndjson] [--strict-resources] [--json]`: each function's
 * granted IAM actions that no exercised call used (infra/tools/iam/unused-grants.ts).
 *
 * Reads the exercised calls from the file given, else from LOCAL_IAM_DECISIONS_FILE (the local
 * stack's IAM enforcement appends one line per evaluated call there), and the role policies of
 * the stack and its nested stacks synthesized in-process with cdk.json's context (as `npm run synth` would, without
 * bundling the functions). Prints the report (or JSON with --json); exit code 0.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { CoffeeTraceStack } from '../stack/coffee-trace-stack';
import { repoRoot } from '../../shared/runtime/paths';
import { functionRoles, rolePolicies, type NamedPolicy } from './iam/role-policies';
import { flatTemplate } from './stack-templates';
import { formatUnusedGrants, parseExercisedCalls, unusedGrants } from './iam/unused-grants';

/** Every function's identity policies, from the stack (and its nested stacks) synthesized in-process. */
function synthesizedRolePolicies(): Record<string, NamedPolicy[]> {
  const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  // Bundling skipped: roles do not depend on the bundles' bytes.
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  // The functions live in nested stacks (infra/stack/function-areas.ts): read them all as one template.
  return rolePolicies(flatTemplate(stack), functionRoles(stack.functions));
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
