/**
 * The whole service in one stack, built from the service manifest (shared/manifest.ts) so that
 * what is deployed is what runs locally:
 * - `Stateful`: table, queues (+ DLQs), manual-review topic, secrets.
 * - `Functions<Area>` (nested stacks, infra/stack/function-areas.ts): one Lambda function per
 *   distinct `fn` (routes and workers) with its role, log group and event sources, grouped by the
 *   area shared/function-areas.ts gives it.
 * - `Service`: the authorizer function, the REST API with one method per route, and the payout
 *   state machine.
 * - `Triggers` (a nested stack): what may invoke the functions without being wired to them
 *   otherwise: API Gateway's invoke permission of each route, and the EventBridge schedules of the
 *   scheduled workers with their permissions.
 * - `Observability`: the dashboard here; the ops topic, its key, the alarms and the log metric
 *   filters in its nested stack `Observability/Alarms` (infra/stack/observability.ts).
 *
 * CloudFormation allows 500 resources per template: the main template must stay at or under
 * {@link MAIN_TEMPLATE_RESOURCE_CEILING} and each area's under AREA_TEMPLATE_RESOURCE_CEILING
 * (test/infra/function-areas.test.ts, stages.test.ts); the API, the stateful resources and the WAF stay in the main one, see
 * docs/deploy.md#what-the-stack-contains.
 */
import { CfnOutput, Duration, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import {
  AUTHORIZER_FN,
  functionManifest,
  manifestProblems,
  queueConsumers,
  queuesOf,
  routes,
  workers,
  type CommonEnvName,
  type FunctionManifest,
  type Need,
  type QueueName,
} from '../../shared/manifest';
import { missingFunctionEntries } from '../bundling';
import { ServiceApi } from './http-api';
import { bindNeeds } from './needs';
import { EvidenceUploads } from './evidence-uploads';
import { PayoutStateMachine, payoutStateMachineArn } from './payout-state-machine';
import { Observability, readOpsAlarmEmail } from './observability';
import { ServiceFunction } from './service-function';
import { loadSettings } from './settings';
import { applyStage } from './stage';
import { RateLimitWaf } from './waf';
import { OutboundWebhookStream } from './outbound-webhooks';
import { StatefulResources } from './stateful-resources';
import { EvidenceStore } from './evidence-store';
import { FunctionAreaStack, pascal } from './function-areas';
import { functionArea, type FunctionArea } from '../../shared/function-areas';

/**
 * The most resources the main template may hold (test/infra/function-areas.test.ts, stages.test.ts):
 * CloudFormation refuses a template over 500. The functions live in their areas' nested stacks
 * (infra/stack/function-areas.ts, each under AREA_TEMPLATE_RESOURCE_CEILING), so a new route costs
 * the main template only its API Gateway method and path resources (about 2); the main template
 * held about 200 when they moved (docs/deploy.md#what-the-stack-contains).
 */
export const MAIN_TEMPLATE_RESOURCE_CEILING = 300;

/** One function's requirements, from the manifest (a `fn` may serve several routes). */
export interface FunctionSpec {
  fn: string;
  needs: Set<Need>;
  timeout: Duration;
  memoryMiB: number;
  /** Attach the Parameters and Secrets extension: its needs carry secrets. */
  readsSecrets: boolean;
  summary: string;
  /** The manifest entry it was built from. */
  manifest: FunctionManifest;
}

/** Distinct functions of the manifest (routes, workers, authorizer) with merged needs. */
export function functionSpecs(fns: readonly FunctionManifest[] = functionManifest()): FunctionSpec[] {
  return fns.map((m) => ({
    fn: m.fn,
    needs: new Set(m.needs),
    timeout: Duration.seconds(m.timeoutSeconds),
    memoryMiB: m.memoryMiB,
    readsSecrets: m.secrets.length > 0,
    summary: m.summary,
    manifest: m,
  }));
}

/** The coffee traceability and farmer payout service. */
export class CoffeeTraceStack extends Stack {
  readonly stateful: StatefulResources;
  readonly api: ServiceApi;
  readonly payout: PayoutStateMachine;
  /** Function per `fn` folder name. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** Nested stack per function area (shared/function-areas.ts): its functions with their roles, log groups and event sources. */
  readonly areas: ReadonlyMap<FunctionArea, FunctionAreaStack>;
  /** Nested stack: the routes' invoke permissions and the scheduled workers' rules. */
  readonly triggers: NestedStack;
  readonly observability: Observability;

  /** @throws Error listing every `functions/<fn>/handler.ts` that does not exist. */
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const problems = manifestProblems();
    if (problems.length > 0)
      throw new Error(`Cannot synthesize ${id}: the manifest (shared/manifest.ts) is inconsistent: ${problems.join('; ')}`);
    const specs = functionSpecs();
    const missing = missingFunctionEntries(specs.map((s) => s.fn));
    if (missing.length > 0) {
      throw new Error(`Cannot synthesize ${id}: missing Lambda handlers ${missing.map((fn) => `functions/${fn}/handler.ts`).join(', ')}`);
    }

    const settings = loadSettings(this);
    applyStage(this, settings.stage);
    this.terminationProtection = settings.stage.terminationProtection;
    const consumers = queueConsumers();
    const sixTimes = (q: QueueName) => Duration.seconds(6 * consumers[q].timeoutSeconds);
    this.stateful = new StatefulResources(this, 'Stateful', {
      queueVisibility: {
        'payout-request-queue': sixTimes('payout-request-queue'),
        'ledger-write-queue': sixTimes('ledger-write-queue'),
        'ledger-receipt-queue': sixTimes('ledger-receipt-queue'),
        'dds-filing-queue': sixTimes('dds-filing-queue'),
        'outbound-webhook-queue': sixTimes('outbound-webhook-queue'),
        'evidence-pin-queue': sixTimes('evidence-pin-queue'),
        'order-work-queue': sixTimes('order-work-queue'),
      },
      managerSubscriptions: settings.managerSubscriptions,
    });

    const service = new Construct(this, 'Service');
    this.api = new ServiceApi(service, 'Http', {
      docsBaseUrlParam: settings.docsBaseUrlParam,
      publicBaseUrlParam: settings.publicBaseUrlParam,
    });
    const stateMachineArn = payoutStateMachineArn(this);
    // The own copy of evidence (docs/api/evidence.md#evidence-on-ipfs): the evidence bucket, Object Lock by context.
    const evidence = new EvidenceStore(this, 'Evidence');
    const common: Record<CommonEnvName, string> = {
      POWERTOOLS_SERVICE_NAME: 'coffee-trace',
      // The CloudWatch namespace of the EMF business metrics (shared/runtime/metrics.ts): the stack's name, so stages never mix.
      POWERTOOLS_METRICS_NAMESPACE: this.stackName,
      LOG_LEVEL: 'INFO',
      DOCS_BASE_URL: this.api.docsBaseUrl,
      // The base of every absolute link (trace page, QR code, docs, OpenAPI server): the PublicBaseUrl parameter, else the API's own stage URL.
      PUBLIC_BASE_URL: this.api.publicBaseUrl,
      // Tells the handlers they run behind API Gateway's TLS: HSTS on every answer, an https PUBLIC_BASE_URL.
      SERVICE_RUNTIME: 'aws',
      // A no-op for SDK v3 (it always reuses connections); kept explicit for older tooling.
      AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
    };

    // Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url).
    const evidenceUploads = new EvidenceUploads(this, 'EvidenceUploads');
    const functions = new Map<string, ServiceFunction>();
    const areas = new Map<FunctionArea, FunctionAreaStack>();
    // Each function in its area's nested stack (shared/function-areas.ts); the authorizer in the main stack with the API.
    const scopeOf = (area: FunctionArea | undefined): { scope: Construct; environment: Record<string, string> } => {
      if (area === undefined) return { scope: service, environment: common };
      const stack = areas.get(area) ?? new FunctionAreaStack(this, area, common);
      areas.set(area, stack);
      return { scope: stack, environment: stack.commonEnvironment };
    };
    for (const spec of specs) {
      const { scope, environment } = scopeOf(functionArea(spec.manifest));
      const f = new ServiceFunction(scope, pascal(spec.fn), {
        fn: spec.fn,
        description: spec.summary,
        timeout: spec.timeout,
        memorySize: spec.memoryMiB,
        environment,
        readsSecrets: spec.readsSecrets,
      });
      bindNeeds(f, spec.needs, {
        stateful: this.stateful,
        settings,
        payoutStateMachineArn: stateMachineArn,
        evidenceBucket: evidence.bucket,
        evidenceUploads,
      });
      functions.set(spec.fn, f);
    }
    this.functions = functions;
    this.areas = areas;
    // Nested stack of invoke permissions and schedules (file comment); it takes the function ARNs and the API id as parameters.
    this.triggers = new NestedStack(this, 'Triggers', {
      description: 'Coffee trace: API Gateway invoke permissions of the routes and schedules of the scheduled workers',
    });
    const fnOf = (fn: string) => {
      const f = functions.get(fn);
      if (!f) throw new Error(`No function ${fn}`);
      return f.fn;
    };

    for (const w of workers) {
      if (w.kind === 'scheduled') {
        new Rule(this.triggers, `${pascal(w.fn)}Schedule`, {
          description: w.summary.slice(0, 512),
          schedule: Schedule.expression(scheduleOf(this, w)),
          targets: [new LambdaFunction(fnOf(w.fn), { retryAttempts: 2 })],
        });
        continue;
      }
      if (w.kind !== 'queue-consumer') continue;
      for (const q of queuesOf(w))
        fnOf(w.fn).addEventSource(
          new SqsEventSource(this.stateful.queues[q], {
            batchSize: w.batchSize,
            reportBatchItemFailures: true,
          }),
        );
    }

    this.api.addRoutes(routes, (fn) => functions.get(fn)?.fn, fnOf(AUTHORIZER_FN), this.triggers);
    // Outbound webhooks: the table's stream feeds the event publisher (docs/api/outbound-webhooks.md#outbound-webhooks).
    new OutboundWebhookStream(service, 'OutboundWebhookStream', {
      table: this.stateful.table,
      consumers: workers.flatMap((w) => (w.kind === 'table-stream-consumer' ? [{ def: w, fn: fnOf(w.fn) }] : [])),
      failureQueue: this.stateful.queues['outbound-webhook-queue'].deadLetterQueue?.queue,
    });
    new RateLimitWaf(this, 'RateLimits', {
      stage: this.api.api.deploymentStage,
      docsBaseUrl: this.api.docsBaseUrl,
      metricPrefix: this.stackName,
    });

    const tasks: Record<string, ReturnType<typeof fnOf>> = {};
    for (const w of workers) if (w.kind === 'state-machine-task') tasks[w.substitution] = fnOf(w.fn);
    this.payout = new PayoutStateMachine(service, 'PayoutLifecycle', { tasks });
    // Dashboard, ops topic and alarms (stage setting alarmsEnabled); after every queue exists: it finds the dead-letter queues.
    this.observability = new Observability(this, 'Observability', {
      alarmsEnabled: settings.alarmsEnabled,
      namespace: this.stackName,
      api: this.api.api,
      stateMachine: this.payout.stateMachine,
      functions,
      ledgerWriteQueue: this.stateful.queues['ledger-write-queue'],
      opsEmail: readOpsAlarmEmail(this),
      payoutBalanceAlarmUsd: settings.payoutBalanceAlarmUsd,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'Base URL of the API (prod stage)' });
    for (const r of routes.filter((x) => x.auth === 'webhook')) {
      new CfnOutput(this, `WebhookUrl${pascal(r.fn)}`, {
        value: this.api.urlOf(r.path),
        description: `Register with the sender: ${r.summary}`,
      });
    }
    new CfnOutput(this, 'PayoutStateMachineArn', { value: this.payout.stateMachine.stateMachineArn });
    new CfnOutput(this, 'LedgerSignerKmsKeyId', {
      value: this.stateful.ledgerSignerKmsKey.keyArn,
      description:
        "The ledger signer KMS key (secp256k1): `npm run ledger-signer-address -- <this ARN>` prints its address, to grant the contracts' roles and fund",
    });
    new CfnOutput(this, 'PayoutProviderCredentialsSecretArn', {
      value: this.stateful.payoutProviderCredentials.secretArn,
      description: 'Put {"api_key","api_secret"} here',
    });
    new CfnOutput(this, 'PawapayCredentialsSecretArn', {
      value: this.stateful.pawapayCredentials.secretArn,
      description: 'Put pawaPay\'s {"api_token","callback_public_keys":[PEM]} here (docs/operations.md#pawapay)',
    });
    new CfnOutput(this, 'PayoutWebhookSecretArn', {
      value: this.stateful.payoutWebhookSecret.secretArn,
      description: "Put the provider's whsec_ secret here",
    });
  }
}

/**
 * The schedule of a scheduled worker: its manifest schedule, or `rate(N minutes)` from the CDK
 * context key its `intervalVariable` names (seconds, a whole number of minutes), e.g.
 * `-c ANCHOR_INTERVAL_S=600`. Errors: Error for a value that is not whole minutes.
 */
export function scheduleOf(scope: Construct, w: { fn: string; schedule: string; intervalVariable?: string }): string {
  const raw: unknown = w.intervalVariable ? scope.node.tryGetContext(w.intervalVariable) : undefined;
  if (raw === undefined) return w.schedule;
  const seconds = Number(raw);
  if (!Number.isSafeInteger(seconds) || seconds < 60 || seconds % 60 !== 0) {
    throw new Error(`-c ${w.intervalVariable}=${String(raw)}: ${w.fn} runs every whole number of minutes (60, 120, 300, …)`);
  }
  return seconds === 60 ? 'rate(1 minute)' : `rate(${seconds / 60} minutes)`;
}
