/**
 * Deploy stages (`-c stage=dev|prod`, infra/stack/stage.ts): both stages' templates, synthesized
 * with cdk.json's context and bundling skipped (`aws:cdk:bundling-stacks: []`: the assets are
 * not what is asserted here; test/infra/stack.test.ts bundles).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CoffeeTraceStack, MAIN_TEMPLATE_RESOURCE_CEILING } from '../../infra/stack/coffee-trace-stack';
import { AREA_TEMPLATE_RESOURCE_CEILING } from '../../infra/stack/function-areas';
import { flatTemplate, stackTemplates } from '../../infra/tools/stack-templates';
import { loadSettings } from '../../infra/stack/settings';
import { readStage, STAGES, type StageName } from '../../infra/stack/stage';
import { repoRoot } from '../../shared/runtime/paths';

jest.setTimeout(120_000);

type Json = Record<string, any>;
const cdkJson = JSON.parse(readFileSync(join(repoRoot(), 'cdk.json'), 'utf8')) as { context: Json };

/** The app `cdk synth -c stage=<stage>` builds (no `-c stage` when undefined). */
function synth(stage: StageName | undefined): { stack: CoffeeTraceStack; main: Record<string, Json>; resources: Record<string, Json> } {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...(stage ? { stage } : {}) } });
  const stack = new CoffeeTraceStack(app, readStage(app).stackName);
  return {
    stack,
    main: Template.fromStack(stack).toJSON().Resources as Record<string, Json>,
    // With the nested stacks' resources (the functions' log groups are in their areas' stacks).
    resources: flatTemplate(stack).Resources as Record<string, Json>,
  };
}

const ofType = (resources: Record<string, Json>, type: string) => Object.values(resources).filter((r) => r.Type === type);

const built: Partial<Record<StageName | 'default', ReturnType<typeof synth>>> = {};
beforeAll(() => {
  built.default = synth(undefined);
  built.dev = synth('dev');
  built.prod = synth('prod');
});

describe.each(['dev', 'prod'] as const)('stage %s', (name) => {
  const stage = STAGES[name];

  test('stack name, stage tag, termination protection', () => {
    const { stack } = built[name]!;
    expect(stack.stackName).toBe(name === 'prod' ? 'CoffeeTrace-prod' : 'CoffeeTrace');
    expect(stack.terminationProtection).toBe(name === 'prod');
    expect(stack.tags.tagValues()['coffee-trace:stage']).toBe(name);
  });

  test('table: removal policy, deletion protection, point-in-time recovery window', () => {
    const [table] = ofType(built[name]!.resources, 'AWS::DynamoDB::Table');
    expect(table!.DeletionPolicy).toBe(name === 'prod' ? 'Retain' : 'Delete');
    expect(table!.UpdateReplacePolicy).toBe(name === 'prod' ? 'Retain' : 'Delete');
    expect(table!.Properties.DeletionProtectionEnabled).toBe(name === 'prod');
    expect(table!.Properties.PointInTimeRecoverySpecification).toEqual({
      PointInTimeRecoveryEnabled: true,
      RecoveryPeriodInDays: name === 'prod' ? 35 : 7,
    });
  });

  test('secrets: retained in prod, deleted with the stack in dev', () => {
    const secrets = ofType(built[name]!.resources, 'AWS::SecretsManager::Secret');
    expect(secrets.length).toBeGreaterThan(5);
    for (const s of secrets) expect(s.DeletionPolicy).toBe(name === 'prod' ? 'Retain' : 'Delete');
  });

  test("every log group: the stage's retention and removal policy", () => {
    const groups = ofType(built[name]!.resources, 'AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(20);
    for (const g of groups) {
      expect(g.Properties.RetentionInDays).toBe(name === 'prod' ? 90 : 7);
      expect(g.DeletionPolicy).toBe(name === 'prod' ? 'Retain' : 'Delete');
    }
  });

  test('state machine named after the stack; alarms setting', () => {
    const [sm] = ofType(built[name]!.resources, 'AWS::StepFunctions::StateMachine');
    expect(sm!.Properties.StateMachineName).toBe(`${stage.stackName}-payout-lifecycle`);
    const app = new App({ context: { stage: name } });
    const settings = loadSettings(new Stack(app, 'Settings'));
    expect(settings.stage).toEqual(stage);
    expect(settings.alarmsEnabled).toBe(true);
    const quiet = loadSettings(new Stack(new App({ context: { stage: name, alarms: 'off' } }), 'Settings'));
    expect(quiet.alarmsEnabled).toBe(false);
  });

  test('cdk-nag AwsSolutions: no unacknowledged findings', () => {
    const app = built[name]!.stack.node.root;
    const report = new AwsSolutionsChecks(app, { verbose: true }).validateScope(app);
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });

  test(`the main template holds at most ${MAIN_TEMPLATE_RESOURCE_CEILING} resources, each area's at most ${AREA_TEMPLATE_RESOURCE_CEILING} (CloudFormation allows 500)`, () => {
    const { stack, main } = built[name]!;
    expect(Object.keys(main).length).toBeLessThanOrEqual(MAIN_TEMPLATE_RESOURCE_CEILING);
    expect(ofType(main, 'AWS::CloudFormation::Stack')).toHaveLength(2 + stack.areas.size);
    for (const t of stackTemplates(stack).filter((x) => [...stack.areas.values()].includes(x.stack as never)))
      expect(Object.keys(t.template.Resources).length).toBeLessThanOrEqual(AREA_TEMPLATE_RESOURCE_CEILING);
  });

  test('the WAF rate limits are in both stages', () => {
    expect(ofType(built[name]!.resources, 'AWS::WAFv2::WebACL')).toHaveLength(1);
    expect(ofType(built[name]!.resources, 'AWS::WAFv2::WebACLAssociation')).toHaveLength(1);
  });
});

test('no -c stage is dev: the same template as -c stage=dev', () => {
  expect(built.default!.stack.stackName).toBe('CoffeeTrace');
  // Every template, nested ones included; a nested stack's TemplateURL (a hash CDK computes of its template while preparing it) aside, since the nested templates themselves are compared.
  const templates = (b: (typeof built)['dev']) =>
    stackTemplates(b!.stack).map((t) =>
      JSON.parse(JSON.stringify(t.template), (key, value) => (key === 'TemplateURL' ? 'nested template' : value)),
    );
  expect(templates(built.default)).toEqual(templates(built.dev));
});

test('-c stackName keeps an older stack under its name in a stage', () => {
  const app = new App({ context: { stage: 'prod', stackName: 'CoffeeTrace' } });
  expect(readStage(app)).toEqual({ ...STAGES.prod, stackName: 'CoffeeTrace' });
  expect(() => readStage(new App({ context: { stackName: 'no spaces allowed' } }))).toThrow(
    /stackName must be a CloudFormation stack name/,
  );
});

test('an unknown stage fails the synth naming the valid ones', () => {
  const app = new App({ context: { stage: 'staging' } });
  expect(() => readStage(app)).toThrow(/stage must be one of dev, prod \(got "staging"\)/);
});
