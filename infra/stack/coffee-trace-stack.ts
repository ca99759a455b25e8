/**
 * The whole service in one stack, built from the route table (shared/http/routes.ts) so that what
 * is deployed is what runs locally:
 * - `Stateful`: table, queues (+ DLQs), manual-review topic, secrets.
 * - `Service`: one Lambda function per distinct `fn` (routes, workers, authorizer), the REST API
 *   with one method per route, and the payout state machine.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { AUTHORIZER_FN, routes, workers, type Need, type RouteDef, type WorkerDef } from '../../shared/http/routes';
import { missingFunctionEntries } from '../bundling';
import { ServiceApi } from './http-api';
import { bindNeeds } from './needs';
import { PayoutStateMachine, payoutStateMachineArn } from './payout-state-machine';
import { ServiceFunction } from './service-function';
import { loadSettings } from './settings';
import { StatefulResources, type QueueName } from './stateful-resources';

/** Timeout of route functions that call only AWS services. */
export const ROUTE_TIMEOUT = Duration.seconds(10);
/**
 * Timeout of route functions that call the ledger or the payout provider (up to 3 attempts of 5 s
 * each): just under API Gateway's 29 s integration limit, so the handler's own error answers.
 */
export const ROUTE_OUTSIDE_CALL_TIMEOUT = Duration.seconds(28);
/** Memory of functions that sign ledger transactions (viem); others get 512 MiB. */
export const LEDGER_MEMORY_MIB = 1024;
/** Records per invocation of each queue's consumer. */
export const QUEUE_BATCH_SIZE: Record<QueueName, number> = { 'payout-request-queue': 5, 'ledger-write-queue': 1, 'dds-filing-queue': 1, 'national-check-queue': 5 };

/** One function's merged requirements (a `fn` may serve several routes). */
export interface FunctionSpec {
  fn: string;
  needs: Set<Need>;
  timeout: Duration;
  summary: string;
}

/** Distinct functions of the route table, workers and the authorizer, with merged needs. */
export function functionSpecs(r: readonly RouteDef[] = routes, w: readonly WorkerDef[] = workers): FunctionSpec[] {
  const specs = new Map<string, FunctionSpec>();
  const add = (fn: string, needs: readonly Need[], timeout: Duration, summary: string) => {
    const spec = specs.get(fn);
    if (!spec) {
      specs.set(fn, { fn, needs: new Set(needs), timeout, summary });
      return;
    }
    needs.forEach((n) => spec.needs.add(n));
    if (timeout.toSeconds() > spec.timeout.toSeconds()) spec.timeout = timeout;
  };
  for (const route of r) {
    const outside = route.needs.includes('ledger') || route.needs.includes('payout-provider');
    add(route.fn, route.needs, outside ? ROUTE_OUTSIDE_CALL_TIMEOUT : ROUTE_TIMEOUT, route.summary);
  }
  for (const worker of w) add(worker.fn, worker.needs, Duration.seconds(worker.timeoutSeconds), worker.summary);
  add(AUTHORIZER_FN, [], ROUTE_TIMEOUT, 'JWT REQUEST authorizer of the API (decisions §2).');
  return [...specs.values()];
}

/** The coffee traceability and farmer payout service. */
export class CoffeeTraceStack extends Stack {
  readonly stateful: StatefulResources;
  readonly api: ServiceApi;
  readonly payout: PayoutStateMachine;
  /** Function per `fn` folder name. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;

  /** @throws Error listing every `functions/<fn>/handler.ts` that does not exist. */
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const specs = functionSpecs();
    const missing = missingFunctionEntries(specs.map((s) => s.fn));
    if (missing.length > 0) {
      throw new Error(`Cannot synthesize ${id}: missing Lambda handlers ${missing.map((fn) => `functions/${fn}/handler.ts`).join(', ')}`);
    }

    const settings = loadSettings(this);
    const consumerOf = (q: QueueName): WorkerDef => {
      const w = workers.find((x) => x.queue === q);
      if (!w) throw new Error(`routes.ts: no consumer for ${q}`);
      return w;
    };
    const sixTimes = (q: QueueName) => Duration.seconds(6 * consumerOf(q).timeoutSeconds);
    this.stateful = new StatefulResources(this, 'Stateful', {
      queueVisibility: { 'payout-request-queue': sixTimes('payout-request-queue'), 'ledger-write-queue': sixTimes('ledger-write-queue'), 'dds-filing-queue': sixTimes('dds-filing-queue'), 'national-check-queue': sixTimes('national-check-queue') },
      managerSubscriptions: settings.managerSubscriptions,
    });

    const service = new Construct(this, 'Service');
    this.api = new ServiceApi(service, 'Http', { docsBaseUrlParam: settings.docsBaseUrlParam });
    const stateMachineArn = payoutStateMachineArn(this);
    const common: Record<string, string> = {
      POWERTOOLS_SERVICE_NAME: 'coffee-trace',
      LOG_LEVEL: 'INFO',
      DOCS_BASE_URL: this.api.docsBaseUrl,
      // A no-op for SDK v3 (it always reuses connections); kept explicit for older tooling.
      AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
    };

    const functions = new Map<string, ServiceFunction>();
    for (const spec of specs) {
      const environment = spec.fn === AUTHORIZER_FN
        ? { ...common, JWT_ISSUER: settings.jwtIssuer, JWT_AUDIENCE: settings.jwtAudience, JWKS_URL: settings.jwksUrl }
        : common;
      const f = new ServiceFunction(service, pascal(spec.fn), {
        fn: spec.fn,
        description: spec.summary,
        timeout: spec.timeout,
        memorySize: spec.needs.has('ledger') ? LEDGER_MEMORY_MIB : 512,
        environment,
        readsSecrets: ['ledger', 'payout-provider', 'payout-webhook-secret', 'chain-webhook-secret', 'pin-store', 'gfw', 'eudr-registry', 'maaif'].some((n) => spec.needs.has(n as Need)),
      });
      bindNeeds(f, spec.needs, { stateful: this.stateful, settings, payoutStateMachineArn: stateMachineArn });
      functions.set(spec.fn, f);
    }
    this.functions = functions;
    const fnOf = (fn: string) => {
      const f = functions.get(fn);
      if (!f) throw new Error(`No function ${fn}`);
      return f.fn;
    };

    for (const w of workers) {
      if (w.kind === 'scheduled') {
        if (!w.schedule) throw new Error(`routes.ts: scheduled worker ${w.fn} names no schedule`);
        new Rule(service, `${pascal(w.fn)}Schedule`, {
          description: w.summary.slice(0, 512),
          schedule: Schedule.expression(w.schedule),
          targets: [new LambdaFunction(fnOf(w.fn), { retryAttempts: 2 })],
        });
        continue;
      }
      if (w.kind !== 'queue-consumer') continue;
      if (!w.queue) throw new Error(`routes.ts: queue consumer ${w.fn} names no queue`);
      fnOf(w.fn).addEventSource(new SqsEventSource(this.stateful.queues[w.queue], {
        batchSize: QUEUE_BATCH_SIZE[w.queue],
        reportBatchItemFailures: true,
      }));
    }

    this.api.addRoutes(routes, (fn) => functions.get(fn)?.fn, fnOf(AUTHORIZER_FN));

    const tasks: Record<string, ReturnType<typeof fnOf>> = {};
    for (const w of workers) if (w.kind === 'state-machine-task' && w.substitution) tasks[w.substitution] = fnOf(w.fn);
    this.payout = new PayoutStateMachine(service, 'PayoutLifecycle', { tasks });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'Base URL of the API (prod stage)' });
    for (const r of routes.filter((x) => x.auth === 'webhook')) {
      new CfnOutput(this, `WebhookUrl${pascal(r.fn)}`, { value: this.api.urlOf(r.path), description: `Register with the sender: ${r.summary}` });
    }
    new CfnOutput(this, 'PayoutStateMachineArn', { value: this.payout.stateMachine.stateMachineArn });
    new CfnOutput(this, 'LedgerSignerKeySecretArn', { value: this.stateful.ledgerSignerKey.secretArn, description: 'Put the ledger signer private key here' });
    new CfnOutput(this, 'PayoutProviderCredentialsSecretArn', { value: this.stateful.payoutProviderCredentials.secretArn, description: 'Put {"api_key","api_secret"} here' });
    new CfnOutput(this, 'PayoutWebhookSecretArn', { value: this.stateful.payoutWebhookSecret.secretArn, description: 'Put the provider\'s whsec_ secret here' });
  }
}

/** `payout-provider-webhook` → `PayoutProviderWebhook` (construct ids). */
function pascal(kebab: string): string {
  return kebab.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
}
