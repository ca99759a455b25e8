/**
 * The functions in nested stacks by area (infra/stack/function-areas.ts, shared/function-areas.ts):
 * where each function and its resources are, and the resource ceiling of every template.
 * Synthesized once without bundling (the placement does not depend on the bundles).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CoffeeTraceStack, MAIN_TEMPLATE_RESOURCE_CEILING } from '../../infra/stack/coffee-trace-stack';
import { AREA_TEMPLATE_RESOURCE_CEILING } from '../../infra/stack/function-areas';
import { flatTemplate, stackTemplates } from '../../infra/tools/stack-templates';
import { FUNCTION_AREAS, functionArea } from '../../shared/function-areas';
import { AUTHORIZER_FN, functionManifest } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { nestedTemplate } from './nested-templates';

jest.setTimeout(240_000);

type Json = Record<string, any>;

const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Json };

let stack: CoffeeTraceStack;
/** Every resource, nested stacks flattened in. */
let resources: Record<string, Json>;
/** The main template's own resources. */
let mainResources: Record<string, Json>;

function fnLogicalId(fn: string): string {
  const f = stack.functions.get(fn)!.fn;
  return f.stack.getLogicalId(f.node.defaultChild as CfnResource);
}
const ofType = (type: string): [string, Json][] => Object.entries(resources).filter(([, r]) => r.Type === type);

beforeAll(() => {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  stack = new CoffeeTraceStack(app, 'CoffeeTrace');
  resources = flatTemplate(stack).Resources as Record<string, Json>;
  mainResources = Template.fromStack(stack).toJSON().Resources as Record<string, Json>;
});

describe('function areas', () => {
  test(`the main template holds at most ${MAIN_TEMPLATE_RESOURCE_CEILING} resources, each area's at most ${AREA_TEMPLATE_RESOURCE_CEILING}, Triggers and Observability/Alarms at most ${MAIN_TEMPLATE_RESOURCE_CEILING} (CloudFormation's limit is 500)`, () => {
    expect(MAIN_TEMPLATE_RESOURCE_CEILING).toBeLessThanOrEqual(300);
    expect(AREA_TEMPLATE_RESOURCE_CEILING).toBeLessThanOrEqual(250);
    const counts: Record<string, number> = { main: Object.keys(mainResources).length };
    expect(counts.main).toBeLessThanOrEqual(MAIN_TEMPLATE_RESOURCE_CEILING);
    const nested = Object.values(mainResources).filter((r) => r.Type === 'AWS::CloudFormation::Stack');
    expect(nested).toHaveLength(2 + stack.areas.size);
    for (const n of [stack.triggers, stack.observability.nested]) {
      counts[n.node.path] = Object.keys(nestedTemplate(n).resources).length;
      expect(counts[n.node.path]).toBeLessThanOrEqual(MAIN_TEMPLATE_RESOURCE_CEILING);
    }
    for (const area of stack.areas.values()) {
      counts[area.node.path] = Object.keys(nestedTemplate(area).resources).length;
      expect(counts[area.node.path]).toBeLessThanOrEqual(AREA_TEMPLATE_RESOURCE_CEILING);
    }
    console.log(`resources per template: ${JSON.stringify(counts)}`);
  });

  /** Resource types and their physical-name property. */
  const NAMED = [
    ['AWS::Lambda::Function', 'FunctionName'],
    ['AWS::Logs::LogGroup', 'LogGroupName'],
    ['AWS::IAM::Role', 'RoleName'],
    ['AWS::Lambda::LayerVersion', 'LayerName'],
  ] as const;

  test('every function but the authorizer is in the nested stack of its area, with its role, log group and event sources', () => {
    const used = new Set(functionManifest().map((m) => functionArea(m)));
    expect([...stack.areas.keys()].sort()).toEqual(FUNCTION_AREAS.filter((a) => used.has(a)).sort());
    for (const m of functionManifest()) {
      const f = stack.functions.get(m.fn)!;
      const area = functionArea(m);
      const expected = area === undefined ? stack : stack.areas.get(area);
      expect({ fn: m.fn, stack: f.fn.stack.node.path }).toEqual({ fn: m.fn, stack: expected!.node.path });
      expect(f.role.stack).toBe(f.fn.stack);
      expect(f.logGroup.stack).toBe(f.fn.stack);
    }
    // The authorizer and API Gateway's authorizer refer to each other: both stay in the main template.
    expect(mainResources[fnLogicalId(AUTHORIZER_FN)]?.Type).toBe('AWS::Lambda::Function');
    // Nothing in an area's stack has a fixed name: a function moving to another area (or stack) is created anew before the old one is deleted, which a fixed name would make collide.
    for (const area of stack.areas.values())
      for (const [id, r] of Object.entries(nestedTemplate(area).resources))
        for (const [type, name] of NAMED)
          if (r.Type === type) expect({ id, [name]: r.Properties?.[name] }).toEqual({ id, [name]: undefined });
    // Each event source mapping beside its function (SQS queues and the table stream arrive as parameters).
    const templateOf = new Map(stackTemplates(stack).flatMap((t) => Object.keys(t.template.Resources).map((id) => [id, t.path] as const)));
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings.length).toBeGreaterThan(0);
    for (const [id, r] of mappings) expect(templateOf.get(id)).toBe(templateOf.get(r.Properties.FunctionName.Ref));
  });
});
