/**
 * The CoffeeTraceStack the template tests assert on (stack.test.ts, stack-security.test.ts):
 * synthesized with cdk.json's context (feature flags and setting defaults), as `npm run synth`
 * produces it, plus one manager subscription. The bindings are filled by `synthesizeStack()`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CoffeeTraceStack } from '../../infra/stack/coffee-trace-stack';
import { repoRoot } from '../../shared/runtime/paths';
import { nestedTemplate } from './nested-templates';
import { flatTemplate } from '../../infra/tools/stack-templates';

export type Json = Record<string, any>;

export const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { app: string; context: Json };
export const MANAGER = { cooperativeId: 'COOP-KAWA', email: 'manager@kawa.example', sms: '+256700123456' };

export let app: App;
export let stack: CoffeeTraceStack;
/** The main template with its nested stacks' flattened in (infra/tools/stack-templates.ts): what the stack deploys, wherever it lives. */
export let template: Template;
export let resources: Record<string, Json>;
/** The main template's own resources. */
export let mainResources: Record<string, Json>;
/** The resources of the nested stack `Triggers` (the routes' invoke permissions and the schedules), as in {@link resources}. */
export let triggers: Record<string, Json>;

/** Logical id of a function folder's Lambda. */
export function fnLogicalId(fn: string): string {
  const f = stack.functions.get(fn);
  if (!f) throw new Error(`no function ${fn}`);
  return f.fn.stack.getLogicalId(f.fn.node.defaultChild as CfnResource);
}

export function ofType(type: string): [string, Json][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** `/a/{id}` path of an AWS::ApiGateway::Resource (or the root GetAtt). */
export function resourcePath(ref: Json): string {
  if (ref['Fn::GetAtt']) return '';
  const r = resources[ref.Ref as string]!;
  return `${resourcePath(r.Properties.ParentId)}/${r.Properties.PathPart}`;
}

/** Synthesizes the stack once per test file (call in `beforeAll`); fills the bindings above. */
export function synthesizeStack(): void {
  const started = Date.now();
  app = new App({ context: { ...cdkJson.context, managerSubscriptions: [MANAGER] } });
  stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  const flat = flatTemplate(stack);
  template = Template.fromJSON(flat);
  resources = flat.Resources as Record<string, Json>;
  mainResources = Template.fromStack(stack).toJSON().Resources as Record<string, Json>;
  triggers = Object.fromEntries(Object.keys(nestedTemplate(stack.triggers).resources).map((id) => [id, resources[id]!]));
  console.log(`CoffeeTraceStack synthesized in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
