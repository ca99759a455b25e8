import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Opt-in usage metering of the local stack (LOCAL_METERING_FILE; `npm run bench` part `cost`):
 * the counts AWS bills by, measured in one run. Off unless the local stack creates a Meter; with
 * no Meter nothing is wrapped or patched, so normal runs are unchanged.
 *
 * - Lambda: invocations and wall-clock duration per function (each invocation's milliseconds
 *   rounded up, as Lambda bills); in-process time on this machine, not Lambda's billed duration.
 * - API Gateway: requests that reached a route handler.
 * - DynamoDB: read/write request units from the ConsumedCapacity DynamoDB Local reports (every
 *   data-plane command is sent with `ReturnConsumedCapacity: 'TOTAL'`); a write refused by its
 *   condition (or a cancelled transaction) reports none and is counted apart.
 * - SQS: SendMessage(Batch) by the functions; ReceiveMessage (with messages / empty) and
 *   DeleteMessage(Batch) by the event-source pollers; standard and FIFO apart.
 * - SNS: Publish. Step Functions API calls by name. State transitions are read from the local
 *   Step Functions' execution histories by the caller (see `snapshot`).
 * Everything done inside a handler is attributed to that function (AsyncLocalStorage);
 * anything outside one (the queue pollers) to `(event-source)`.
 */

export interface FunctionUsage {
  invocations: number;
  duration_ms: number;
  /** Σ per invocation of ceil(duration ms): what Lambda's per-millisecond billing would round to. */
  billed_ms: number;
  rru: number;
  wru: number;
  ddb_requests: number;
  /** Conditional writes refused / transactions cancelled (no ConsumedCapacity reported). */
  ddb_refused_writes: number;
  sqs_standard: number;
  sqs_fifo: number;
  sqs_empty_receives: number;
  sns_publishes: number;
  sfn_api_calls: number;
}

export interface MeterSnapshot {
  taken_at: string;
  api_requests: number;
  api_requests_by_fn: Record<string, number>;
  functions: Record<string, FunctionUsage>;
  state_transitions: number;
  executions: { started: number; running: number };
}

const OUTSIDE = '(event-source)';
const READS = new Set([
  'Get',
  'GetItem',
  'Query',
  'Scan',
  'BatchGet',
  'BatchGetItem',
  'TransactGet',
  'TransactGetItems',
  'ExecuteStatement',
]);
const WRITES = new Set([
  'Put',
  'PutItem',
  'Update',
  'UpdateItem',
  'Delete',
  'DeleteItem',
  'BatchWrite',
  'BatchWriteItem',
  'TransactWrite',
  'TransactWriteItems',
]);

type Send = (
  this: { config?: { serviceId?: string } },
  command: { constructor: { name: string }; input?: Record<string, unknown> },
  ...rest: unknown[]
) => unknown;

export class Meter {
  private readonly als = new AsyncLocalStorage<string>();
  private readonly usage = new Map<string, FunctionUsage>();
  private readonly api = new Map<string, number>();
  private readonly ignoredQueues = new Set<string>();

  /** Queue URLs whose traffic is a local stand-in only (the notification inbox): not counted. */
  ignoreQueue(url: string): void {
    this.ignoredQueues.add(url);
  }

  private of(fn: string): FunctionUsage {
    let u = this.usage.get(fn);
    if (!u) {
      u = {
        invocations: 0,
        duration_ms: 0,
        billed_ms: 0,
        rru: 0,
        wru: 0,
        ddb_requests: 0,
        ddb_refused_writes: 0,
        sqs_standard: 0,
        sqs_fifo: 0,
        sqs_empty_receives: 0,
        sns_publishes: 0,
        sfn_api_calls: 0,
      };
      this.usage.set(fn, u);
    }
    return u;
  }

  /** `handler` counted as invocations of `fn` (and, with `api`, as API Gateway requests). */
  wrap<A extends unknown[], R>(fn: string, handler: (...args: A) => Promise<R>, api = false): (...args: A) => Promise<R> {
    return (...args: A) => {
      if (api) this.api.set(fn, (this.api.get(fn) ?? 0) + 1);
      const started = performance.now();
      const done = () => {
        const ms = performance.now() - started;
        const u = this.of(fn);
        u.invocations++;
        u.duration_ms += ms;
        u.billed_ms += Math.max(1, Math.ceil(ms));
      };
      return this.als.run(fn, () => handler(...args)).finally(done);
    };
  }

  /**
   * Wraps `send` of the given AWS SDK client base prototypes (smithy `Client.prototype`, one per
   * installed copy) so every DynamoDB, SQS, SNS and Step Functions command is counted.
   */
  instrument(clientPrototypes: object[]): void {
    const meter = this;
    for (const proto of new Set(clientPrototypes)) {
      const p = proto as { send: Send; __metered?: boolean };
      if (p.__metered) continue;
      const original = p.send;
      p.send = function metered(this: { config?: { serviceId?: string } }, command, ...rest) {
        return meter.sent(this.config?.serviceId ?? '', command, () => original.call(this, command, ...rest));
      };
      p.__metered = true;
    }
  }

  private sent(service: string, command: { constructor: { name: string }; input?: Record<string, unknown> }, call: () => unknown): unknown {
    const name = command.constructor.name.replace(/Command$/, '');
    const u = this.of(this.als.getStore() ?? OUTSIDE);
    const input = command.input ?? {};
    if (service === 'DynamoDB' && (READS.has(name) || WRITES.has(name))) {
      input.ReturnConsumedCapacity = 'TOTAL';
      u.ddb_requests++;
      const out = call() as Promise<{ ConsumedCapacity?: unknown }>;
      return out.then(
        (r) => {
          const cc = ([] as Array<{ CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number }>).concat(
            (r?.ConsumedCapacity ?? []) as never,
          );
          for (const c of cc) {
            if (c.ReadCapacityUnits || c.WriteCapacityUnits) {
              u.rru += c.ReadCapacityUnits ?? 0;
              u.wru += c.WriteCapacityUnits ?? 0;
            } else if (READS.has(name)) u.rru += c.CapacityUnits ?? 0;
            else u.wru += c.CapacityUnits ?? 0;
          }
          return r;
        },
        (err: { name?: string }) => {
          if (err?.name === 'ConditionalCheckFailedException' || err?.name === 'TransactionCanceledException') u.ddb_refused_writes++;
          throw err;
        },
      );
    }
    if (service === 'SQS') {
      const url = String(input.QueueUrl ?? '');
      if (this.ignoredQueues.has(url)) return call();
      const fifo = url.endsWith('.fifo');
      if (name === 'ReceiveMessage') {
        return (call() as Promise<{ Messages?: unknown[] }>).then((r) => {
          if (r?.Messages?.length) fifo ? u.sqs_fifo++ : u.sqs_standard++;
          else u.sqs_empty_receives++;
          return r;
        });
      }
      fifo ? u.sqs_fifo++ : u.sqs_standard++;
    } else if (service === 'SNS' && /^Publish/.test(name)) u.sns_publishes++;
    else if (service === 'SFN') u.sfn_api_calls++;
    return call();
  }

  /** The counters so far; state transitions and executions come from the local Step Functions. */
  snapshot(states: { transitions: number; started: number; running: number }): MeterSnapshot {
    return {
      taken_at: new Date().toISOString(),
      api_requests: [...this.api.values()].reduce((a, b) => a + b, 0),
      api_requests_by_fn: Object.fromEntries(this.api),
      functions: Object.fromEntries([...this.usage].map(([k, v]) => [k, { ...v }])),
      state_transitions: states.transitions,
      executions: { started: states.started, running: states.running },
    };
  }
}
