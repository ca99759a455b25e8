/**
 * The service manifest: every function (route, worker or the authorizer) with what it needs, and
 * every Need with the environment variables and secrets it provides. Data only, importing no
 * handler and no aws-cdk-lib, so the CDK stack (infra/stack), the local stack and gateway
 * (infra/local) and the OpenAPI document (shared/http/openapi.ts) all read the same table, and
 * what runs locally is what is deployed.
 *
 * - `routes`: one API Gateway method per entry; `fn` names the function folder
 *   (`functions/<fn>/handler.ts` exporting `handler`). `auth`: `jwt` routes sit behind the shared
 *   Lambda REQUEST authorizer (functions/authorizer); `webhook` routes check a Standard Webhooks
 *   signature themselves; `public` routes need nothing.
 * - `workers`: state-machine tasks, queue consumers (with their queue and batch size) and
 *   scheduled functions.
 * - `authorizer`: the shared REQUEST authorizer.
 * - `NEEDS` (shared/needs.ts, re-exported here): what each Need puts in a function's environment,
 *   the work queues, the environment every function gets.
 * - `functionManifest()`: the per-function view (merged needs, timeout, memory, queue, batch size,
 *   schedule, environment names, secrets) both stacks are built from.
 *
 * IAM grants are not data: infra/stack/needs.ts grants per Need.
 */

import { ROUTES } from './http/routes';
import type { Need } from './need';
import { type NeedSpec, NEEDS, QUEUES, type QueueName, ROUTE_TIMEOUT_SECONDS, DEFAULT_MEMORY_MIB, type SecretSpec } from './needs';

export {
  COMMON_ENV,
  type CommonEnvName,
  DEFAULT_MEMORY_MIB,
  NEEDS,
  type NeedEnvName,
  type NeedSpec,
  QUEUES,
  type QueueName,
  ROUTE_TIMEOUT_SECONDS,
  type SecretName,
  type SecretSpec,
  UNDECLARED_ENV,
} from './needs';

export type { Need };

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type RouteAuth = 'jwt' | 'webhook' | 'public';

/** One HTTP route. */
export interface RouteDef {
  method: HttpMethod;
  /** API Gateway path syntax: `/batch/{id}`. */
  path: string;
  fn: string;
  auth: RouteAuth;
  needs: Need[];
  /** Largest accepted request body in bytes (docs/api/conventions.md#http-and-errors); default 1 MiB. */
  maxBodyBytes?: number;
  summary: string;
}

interface WorkerBase {
  fn: string;
  needs: Need[];
  timeoutSeconds: number;
  summary: string;
}

/** A task of the payout state machine. */
interface StateMachineTaskDef extends WorkerBase {
  kind: 'state-machine-task';
  /** The ASL definition-substitution key holding its ARN. */
  substitution: string;
  queue?: undefined;
  batchSize?: undefined;
  schedule?: undefined;
}

/** The consumer of one work queue. */
export interface QueueConsumerDef extends WorkerBase {
  kind: 'queue-consumer';
  /** Which queue feeds it. */
  queue: QueueName;
  /** Further queues feeding it, each its own event source with the same batch size. */
  extraQueues?: readonly QueueName[];
  /** Records per invocation (the SQS event source's batch size; locally the poller's). */
  batchSize: number;
  substitution?: undefined;
  schedule?: undefined;
}

/** A function run on a schedule. */
interface ScheduledDef extends WorkerBase {
  kind: 'scheduled';
  /** An EventBridge schedule expression (locally a timer, scaled by LOCAL_TIME_SCALE). */
  schedule: string;
  /**
   * A setting that overrides the schedule's interval, in seconds (whole minutes in AWS): the CDK
   * context key of this name at deploy (`-c ANCHOR_INTERVAL_S=600`), the environment variable of
   * this name for the local stack (then scaled by LOCAL_TIME_SCALE).
   */
  intervalVariable?: string;
  substitution?: undefined;
  queue?: undefined;
  batchSize?: undefined;
}

/**
 * A consumer of the single table's DynamoDB stream (NEW_AND_OLD_IMAGES): in AWS a stream event
 * source (infra/stack/outbound-webhooks.ts), locally a poller of DynamoDB Local's stream
 * (infra/local/table-stream-poller.ts).
 */
export interface TableStreamConsumerDef extends WorkerBase {
  kind: 'table-stream-consumer';
  /** Stream records per invocation. */
  batchSize: number;
  /** Only items whose `entity` is one of these reach the function (event filtering). */
  entities: string[];
  substitution?: undefined;
  queue?: undefined;
  schedule?: undefined;
}

/** Functions that are not behind an HTTP route: state-machine tasks, queue consumers, scheduled, table-stream consumers. */
export type WorkerDef = StateMachineTaskDef | QueueConsumerDef | ScheduledDef | TableStreamConsumerDef;

/** The shared REQUEST authorizer. */
export interface AuthorizerDef {
  fn: string;
  needs: Need[];
  summary: string;
}

/** One mebibyte (1024 × 1024 bytes), as a literal so bundles inline it. */
export const MIB = 1_048_576;

/**
 * The API Gateway routes, derived from the route definitions (shared/http/routes/, one per route):
 * what the stacks and the local gateway need of each.
 */
export const routes: RouteDef[] = /* @__PURE__ */ ROUTES.map((d) => ({
  method: d.method,
  path: d.path,
  fn: d.fn,
  auth: d.auth,
  needs: [...d.needs],
  ...(d.maxBodyBytes === undefined ? {} : { maxBodyBytes: d.maxBodyBytes }),
  summary: d.summary,
}));

export const workers: WorkerDef[] = [
  {
    fn: 'payout-attempt',
    kind: 'state-machine-task',
    substitution: 'PayoutAttemptFunctionArn',
    needs: ['table:write', 'audit:append', 'payout-provider', 'payout-state-machine:callback'],
    timeoutSeconds: 30,
    summary: 'Creates (idempotently) the provider order of one attempt and parks the task token.',
  },
  {
    fn: 'payout-check-attempt',
    kind: 'state-machine-task',
    substitution: 'PayoutCheckAttemptFunctionArn',
    needs: ['table:write', 'audit:append', 'payout-provider'],
    timeoutSeconds: 30,
    summary:
      "After a failure or timeout, reads the attempt's final status from the provider and decides: completed, still pending, retry, or exhausted.",
  },
  {
    fn: 'payout-manual-review',
    kind: 'state-machine-task',
    substitution: 'PayoutManualReviewFunctionArn',
    needs: ['table:write', 'audit:append', 'manual-review-topic:publish'],
    timeoutSeconds: 30,
    summary: 'Moves the payout to MANUAL_REVIEW and notifies the cooperative manager.',
  },
  {
    fn: 'ledger-writer',
    kind: 'queue-consumer',
    queue: 'ledger-write-queue',
    extraQueues: ['ledger-receipt-queue'],
    batchSize: 10,
    needs: [
      'table:write',
      'table:batch-read',
      'audit:append',
      'loan-guard:release',
      'ledger',
      'vault',
      'vault:read',
      'payout-request-queue:send',
      'ledger-write-queue:send',
      'ledger-receipt-queue:send',
    ],
    timeoutSeconds: 60,
    summary:
      'The single ledger writer: lands trace-log transactions in order, re-sending the same signed transaction until mined; up to 10 queue messages an invocation, from its writes queue and, beside them, its receipt-checks queue.',
  },
  {
    fn: 'national-registry-check',
    kind: 'scheduled',
    schedule: 'rate(1 minute)',
    needs: ['table:write', 'maaif'],
    timeoutSeconds: 60,
    summary:
      'Completes farmer registrations still waiting for the national farmer registry (MAAIF); those it cannot answer yet wait for the next run.',
  },
  {
    fn: 'dds-filer',
    kind: 'queue-consumer',
    queue: 'dds-filing-queue',
    batchSize: 1,
    needs: ['table:write', 'audit:append', 'eudr-registry', 'manual-review-topic:publish', 'dds-documents:read'],
    timeoutSeconds: 30,
    summary: 'Files due diligence statements with the EU Information System and waits for their reference numbers.',
  },
  {
    fn: 'payout-reconciler',
    kind: 'scheduled',
    schedule: 'rate(5 minutes)',
    needs: [
      'table:write',
      'audit:append',
      'payout:discard',
      'payout-provider',
      'payout-state-machine:start',
      'payout-state-machine:callback',
    ],
    timeoutSeconds: 120,
    summary:
      'Asks the provider about payouts with no activity for 5 minutes and settles, fails or restarts them; starts the payout of batches still without it; stores loans ACTIVE once disbursed and starts lost disbursements again.',
  },
  {
    fn: 'payout-balance-monitor',
    kind: 'scheduled',
    schedule: 'rate(5 minutes)',
    needs: ['table:write', 'payout-provider', 'payout-balance-alarm', 'manual-review-topic:publish'],
    timeoutSeconds: 60,
    summary:
      "Reads each payout provider's merchant balance, records it in USD (metric PayoutMerchantBalanceUsd, the low-balance alarm's input) and, below PAYOUT_BALANCE_ALARM_USD, notifies the ops once per crossing (docs/operations.md#merchant-balance-alarm).",
  },
  {
    fn: 'chain-event-watcher',
    kind: 'scheduled',
    schedule: 'rate(1 minute)',
    needs: [
      'table:write',
      'table:batch-read',
      'audit:append',
      'payout:discard',
      'payout-provider',
      'payout-state-machine:start',
      'ledger:read',
      'vault:read',
      'pin-store',
      'ledger-write-queue:send',
      'order-work-queue:send',
      'chain-watch',
    ],
    timeoutSeconds: 60,
    summary:
      'Our own chain watcher: reads TraceLog StageRecorded and LendingVault PurchaseOrderPaid logs (eth_getLogs) from the block cursor kept in the table, CHAIN_WATCH_CONFIRMATIONS deep, and applies each as the chain-events webhook does (EXPORTED starts the TOP_UP payout; a buyer payment settles its purchase order), with no webhook sent.',
  },
  {
    fn: 'audit-anchorer',
    kind: 'scheduled',
    schedule: 'rate(5 minutes)',
    intervalVariable: 'ANCHOR_INTERVAL_S',
    needs: ['table:write', 'table:batch-read', 'ledger-write-queue:send'],
    timeoutSeconds: 120,
    summary:
      'The periodic anchor of audit logs (docs/api/anchoring.md#anchoring-of-the-audit-log): commits the audit heads of every batch written since the last anchor as one Merkle root (AuditAnchor.anchor, through the single ledger writer); once mined, each batch keeps its proof.',
  },
  {
    fn: 'ledger-write-reconciler',
    kind: 'scheduled',
    schedule: 'rate(5 minutes)',
    needs: ['table:write', 'ledger-write-queue:send', 'evidence-pin-queue:send'],
    timeoutSeconds: 60,
    summary:
      'Queues again ledger writes still unconfirmed after 5 minutes (for the single ledger writer) and evidence pin jobs still open (for the background pinner); requests the vault write-off (WRITE_OFF_LOAN, for the single ledger writer) of loans still ACTIVE 90 days past due.',
  },
  {
    fn: 'outbound-event-publisher',
    kind: 'table-stream-consumer',
    batchSize: 100,
    entities: ['BATCH', 'PAYMENT', 'JOB', 'DDS', 'LOAN', 'DEPOSIT'],
    needs: ['table:write', 'outbound-webhook-queue:send'],
    timeoutSeconds: 60,
    summary:
      'Turns committed changes of the table (its DynamoDB stream) into outbound webhook events and queues one delivery per subscribed endpoint (docs/api/outbound-webhooks.md#outbound-webhooks).',
  },
  {
    fn: 'payout-receipt-sender',
    kind: 'table-stream-consumer',
    batchSize: 10,
    entities: ['PAYMENT'],
    needs: ['table:write', 'sms:send'],
    timeoutSeconds: 30,
    summary:
      "Sends the farmer's SMS receipt (amount in UGX, batch, payout id) when a mobile-money payout is COMPLETED, once per payout (a conditioned mark on the payout; docs/operations.md#sms-receipt-to-the-farmer).",
  },
  {
    fn: 'outbound-webhook-sender',
    kind: 'queue-consumer',
    queue: 'outbound-webhook-queue',
    batchSize: 10,
    needs: ['table:write', 'outbound-webhook-queue:send', 'outbound-webhooks', 'outbound-secrets:open', 'outbound-secrets:seal'],
    timeoutSeconds: 60,
    summary:
      "Makes one signed delivery attempt per message (opening the endpoint's sealed secrets; a plaintext secret of an endpoint registered before sealing is sealed then) and schedules the next on the Standard Webhooks retry schedule; 410 disables the endpoint.",
  },
  {
    fn: 'purchase-order-worker',
    kind: 'queue-consumer',
    queue: 'order-work-queue',
    batchSize: 1,
    needs: ['table:write', 'table:batch-read', 'audit:append', 'pin-store', 'ledger-write-queue:send', 'order-work-queue:send'],
    timeoutSeconds: 60,
    summary:
      'The order worker (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): binds, confirms and settles the batches of purchase orders above one transaction, step by step with the progress recorded on the order and its settlement, off the request path.',
  },
  {
    fn: 'purchase-order-reconciler',
    kind: 'scheduled',
    schedule: 'rate(5 minutes)',
    needs: ['table:write', 'order-work-queue:send'],
    timeoutSeconds: 60,
    summary:
      'Queues again the order work of large purchase orders (creation, confirmation, settlement) that made no progress for 5 minutes: a message lost before it was queued, or dead-lettered (docs/api/batches-and-custody.md#resuming-stalled-orders).',
  },
  {
    fn: 'evidence-pinner',
    kind: 'queue-consumer',
    queue: 'evidence-pin-queue',
    batchSize: 5,
    needs: ['table:write', 'evidence-archive:read', 'evidence-pinning'],
    timeoutSeconds: 60,
    summary:
      'The background pinner (docs/api/evidence.md#evidence-on-ipfs): uploads each stage evidence CAR from the own copy to the IPFS pinning service, checks the root CID it answers, and records PINNED or FAILED.',
  },
  {
    fn: 'batch-payout-starter',
    kind: 'queue-consumer',
    queue: 'payout-request-queue',
    batchSize: 5,
    needs: ['table:write', 'audit:append', 'payout:discard', 'payout-provider', 'payout-state-machine:start'],
    timeoutSeconds: 60,
    summary: 'Starts the NET_COFFEE_PAYMENT payout of a submitted batch.',
  },
];

/** The shared REQUEST authorizer's function folder. */
export const AUTHORIZER_FN = 'authorizer';

/** The shared REQUEST authorizer (timeout `ROUTE_TIMEOUT_SECONDS`). */
const authorizer: AuthorizerDef = {
  fn: AUTHORIZER_FN,
  needs: ['token-issuer'],
  summary: 'JWT REQUEST authorizer of the API (docs/security.md#tokens-and-roles).',
};

/** One function as both stacks build it: the merge of its routes or its worker, and its needs. */
export interface FunctionManifest {
  fn: string;
  kind: 'route' | 'authorizer' | WorkerDef['kind'];
  /** The routes it serves (empty for workers and the authorizer). */
  routes: Array<Pick<RouteDef, 'method' | 'path' | 'auth'>>;
  /** Merged, in first-declared order. */
  needs: Need[];
  timeoutSeconds: number;
  memoryMiB: number;
  /** Queue consumers: the queue that feeds it (and further ones) and the records per invocation. */
  queue?: QueueName;
  extraQueues?: readonly QueueName[];
  batchSize?: number;
  /** Scheduled workers: the EventBridge schedule expression. */
  schedule?: string;
  /** State-machine tasks: the ASL substitution key holding its ARN. */
  substitution?: string;
  /** Environment variable names its needs provide in AWS (required ones and secret ARNs), sorted. */
  env: string[];
  /** Secrets its needs carry. */
  secrets: SecretSpec[];
  /** The first route's or the worker's summary. */
  summary: string;
}

/** Sorted, unique. */
function sortedUnique(names: Iterable<string>): string[] {
  return [...new Set(names)].sort();
}

/** Secrets carried by `needs`, unique by name. */
function secretsOf(needs: Iterable<Need>): SecretSpec[] {
  const byName = new Map<string, SecretSpec>();
  for (const n of needs) for (const s of NEEDS[n].secrets as readonly SecretSpec[]) byName.set(s.name, s);
  return [...byName.values()];
}

/** Environment variable names `needs` provide in AWS: required variables and secret ARN variables, sorted. */
function awsEnvOf(needs: Iterable<Need>): string[] {
  const list = [...needs];
  return sortedUnique([...list.flatMap((n) => NEEDS[n].env as readonly string[]), ...secretsOf(list).map((s) => s.arnVariable)]);
}

/**
 * Every function of the service (distinct `fn` of routes, workers and the authorizer), merged.
 * Route timeout: the largest `routeTimeoutSeconds` of its needs (default `ROUTE_TIMEOUT_SECONDS`);
 * workers: their `timeoutSeconds`; memory: the largest `memoryMiB` of its needs (default
 * `DEFAULT_MEMORY_MIB`).
 * @throws Error when a `fn` is both a route and a worker, or two workers, or the authorizer and
 * anything else.
 */
export function functionManifest(
  r: readonly RouteDef[] = routes,
  w: readonly WorkerDef[] = workers,
  a: AuthorizerDef = authorizer,
): FunctionManifest[] {
  const out = new Map<string, FunctionManifest>();
  const claim = (fn: string, kind: FunctionManifest['kind'], summary: string, timeoutSeconds: number): FunctionManifest => {
    const seen = out.get(fn);
    if (seen && (seen.kind !== 'route' || kind !== 'route'))
      throw new Error(`manifest: function ${fn} is declared as ${seen.kind} and as ${kind}`);
    const entry = seen ?? { fn, kind, routes: [], needs: [], timeoutSeconds, memoryMiB: DEFAULT_MEMORY_MIB, env: [], secrets: [], summary };
    out.set(fn, entry);
    return entry;
  };
  const addNeeds = (entry: FunctionManifest, needs: readonly Need[]) => {
    for (const n of needs) if (!entry.needs.includes(n)) entry.needs.push(n);
  };
  for (const route of r) {
    const entry = claim(route.fn, 'route', route.summary, ROUTE_TIMEOUT_SECONDS);
    entry.routes.push({ method: route.method, path: route.path, auth: route.auth });
    addNeeds(entry, route.needs);
    for (const n of route.needs) entry.timeoutSeconds = Math.max(entry.timeoutSeconds, (NEEDS[n] as NeedSpec).routeTimeoutSeconds ?? 0);
  }
  for (const worker of w) {
    const entry = claim(worker.fn, worker.kind, worker.summary, worker.timeoutSeconds);
    addNeeds(entry, worker.needs);
    if (worker.queue !== undefined) entry.queue = worker.queue;
    if (worker.kind === 'queue-consumer' && worker.extraQueues) entry.extraQueues = worker.extraQueues;
    if (worker.batchSize !== undefined) entry.batchSize = worker.batchSize;
    if (worker.schedule !== undefined) entry.schedule = worker.schedule;
    if (worker.substitution !== undefined) entry.substitution = worker.substitution;
  }
  addNeeds(claim(a.fn, 'authorizer', a.summary, ROUTE_TIMEOUT_SECONDS), a.needs);
  for (const entry of out.values()) {
    for (const n of entry.needs) entry.memoryMiB = Math.max(entry.memoryMiB, (NEEDS[n] as NeedSpec).memoryMiB ?? 0);
    entry.env = awsEnvOf(entry.needs);
    entry.secrets = secretsOf(entry.needs);
  }
  return [...out.values()];
}

/** The queues feeding a queue consumer: its `queue`, then its `extraQueues`. */
export function queuesOf(w: QueueConsumerDef): QueueName[] {
  return [w.queue, ...(w.extraQueues ?? [])];
}

/** The consumer of each queue. @throws Error when a queue has none. */
export function queueConsumers(w: readonly WorkerDef[] = workers): Record<QueueName, QueueConsumerDef> {
  const find = (q: QueueName): QueueConsumerDef => {
    const c = w.find((x): x is QueueConsumerDef => x.kind === 'queue-consumer' && queuesOf(x).includes(q));
    if (!c) throw new Error(`manifest: no consumer for ${q}`);
    return c;
  };
  return {
    'payout-request-queue': find('payout-request-queue'),
    'ledger-write-queue': find('ledger-write-queue'),
    'ledger-receipt-queue': find('ledger-receipt-queue'),
    'dds-filing-queue': find('dds-filing-queue'),
    'outbound-webhook-queue': find('outbound-webhook-queue'),
    'evidence-pin-queue': find('evidence-pin-queue'),
    'order-work-queue': find('order-work-queue'),
  };
}

/**
 * What is wrong with the manifest, one sentence each (empty when consistent): every queue has
 * exactly one consumer with a batch size of 1–10 (SQS event source limit without a batching
 * window), schedules are `rate(...)`/`cron(...)`, substitution keys are unique, route timeouts stay
 * under API Gateway's 29 s, every queue's `:send` need provides its `urlEnv`.
 */
export function manifestProblems(
  r: readonly RouteDef[] = routes,
  w: readonly WorkerDef[] = workers,
  a: AuthorizerDef = authorizer,
): string[] {
  const problems: string[] = [];
  let fns: FunctionManifest[] = [];
  try {
    fns = functionManifest(r, w, a);
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const q of Object.keys(QUEUES) as QueueName[]) {
    const consumers = w.filter((x) => x.kind === 'queue-consumer' && queuesOf(x).includes(q));
    if (consumers.length !== 1) problems.push(`queue ${q} has ${consumers.length} consumers (want exactly 1)`);
    const send = NEEDS[`${q}:send` as const].env as readonly string[];
    if (send.join() !== QUEUES[q].urlEnv) problems.push(`need ${q}:send provides [${send.join(', ')}], want [${QUEUES[q].urlEnv}]`);
  }
  for (const x of w) {
    if (x.kind === 'queue-consumer' && !(Number.isInteger(x.batchSize) && x.batchSize >= 1 && x.batchSize <= 10))
      problems.push(`${x.fn}: batch size ${x.batchSize} is not 1–10`);
    if (x.kind === 'scheduled' && !/^(rate|cron)\(.+\)$/.test(x.schedule))
      problems.push(`${x.fn}: schedule ${x.schedule} is not rate(...) or cron(...)`);
  }
  const subs = w.flatMap((x) => (x.kind === 'state-machine-task' ? [x.substitution] : []));
  if (new Set(subs).size !== subs.length) problems.push(`state-machine substitution keys repeat: ${subs.join(', ')}`);
  for (const f of fns) {
    if ((f.kind === 'route' || f.kind === 'authorizer') && f.timeoutSeconds >= 29)
      problems.push(`${f.fn}: timeout ${f.timeoutSeconds} s is not under API Gateway's 29 s`);
  }
  return problems;
}

/** A variable the local stack must set and did not. */
export interface MissingLocalVariable {
  /** The variable, or `NAME (or NAME_SECRET_ARN)` for a secret. */
  variable: string;
  need: Need;
  functions: string[];
}

/**
 * The variables the needs of `fns` declare that `env` lacks, for the local stack (all functions
 * share one process environment there): each need's `local` variables where it has them, else its
 * `env`; a secret counts as set when its value (`name`) or its ARN variable is.
 */
export function missingLocalEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  fns: readonly FunctionManifest[] = functionManifest(),
): MissingLocalVariable[] {
  const missing = new Map<string, MissingLocalVariable>();
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  for (const f of fns) {
    for (const need of f.needs) {
      const spec = NEEDS[need] as NeedSpec;
      const local = spec.local ?? spec;
      const absent = [
        ...local.env.filter((name) => !set(name)),
        ...local.secrets.filter((s) => !set(s.name) && !set(s.arnVariable)).map((s) => `${s.name} (or ${s.arnVariable})`),
      ];
      for (const variable of absent) {
        const key = `${variable}\n${need}`;
        const entry = missing.get(key) ?? { variable, need, functions: [] };
        entry.functions.push(f.fn);
        missing.set(key, entry);
      }
    }
  }
  return [...missing.values()];
}
