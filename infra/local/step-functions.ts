import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import '../../shared/runtime/polyfills';

/**
 * A local Step Functions endpoint: the real ASL file run by aws-local-stepfunctions behind the
 * Step Functions JSON API (StartExecution, DescribeExecution, GetExecutionHistory, StopExecution,
 * SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat), so handlers use @aws-sdk/client-sfn
 * unchanged through `AWS_ENDPOINT_URL_SFN`.
 *
 * Task states run local functions (the Lambda handlers, in process) looked up by the function ARN
 * in their `Parameters.FunctionName`. `.waitForTaskToken` is emulated as stack.md describes: every
 * entry into the task gets a fresh token (`$$.Task.Token`), the function is invoked with the
 * Payload, and the task waits on a promise that SendTaskSuccess resolves and SendTaskFailure
 * rejects with an Error named after the ASL error. Wait states, retry intervals and the timeouts
 * of `.waitForTaskToken` tasks are multiplied by `timeScale` (LOCAL_TIME_SCALE; a retry interval
 * is scaled without its backoff); other tasks keep their own timeouts. The file on disk is not changed.
 */

export type LocalFunction = (payload: unknown) => Promise<unknown>;

interface TokenEntry {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  closed: boolean;
  executionArn: string;
  state: string;
}

interface Execution {
  executionArn: string;
  name: string;
  input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  history: Array<{ timestamp: number; type: string; state?: string; error?: string }>;
  abort: () => void;
}

export interface LocalStepFunctions {
  url: string;
  port: number;
  stateMachineArn: string;
  /** Executions by name (for tests and the demo). */
  executions(): Map<string, Execution>;
  stop(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Starts the endpoint for one state machine. */
export async function startLocalStepFunctions(opts: {
  port?: number;
  name: string;
  definition: string;
  substitutions: Record<string, string>;
  functions: Record<string, LocalFunction>;
  timeScale: number;
  log?: (line: string) => void;
}): Promise<LocalStepFunctions> {
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const stateMachineArn = `arn:aws:states:${region}:000000000000:stateMachine:${opts.name}`;
  let text = opts.definition;
  for (const [k, v] of Object.entries(opts.substitutions)) text = text.split(`\${${k}}`).join(v);
  const leftover = /\$\{(\w+)\}/.exec(text);
  if (leftover) throw new Error(`definition placeholder \${${leftover[1]}} has no substitution`);
  const definition = JSON.parse(text) as StateMachineDefinition;

  const tokens = new Map<string, TokenEntry>();
  const executions = new Map<string, Execution>();
  const byArn = new Map<string, Execution>();
  const waitTimeOverrides: Record<string, number> = {};
  const retryIntervalOverrides: Record<string, number[]> = {};
  const taskResourceLocalHandlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const timeoutMs: Record<string, number> = {};

  for (const [stateName, raw] of Object.entries(definition.States)) {
    const state = raw as unknown as Record<string, unknown>;
    if (state.Type === 'Wait' && typeof state.Seconds === 'number') waitTimeOverrides[stateName] = state.Seconds * 1000 * opts.timeScale;
    if (Array.isArray(state.Retry)) {
      retryIntervalOverrides[stateName] = (state.Retry as Array<{ IntervalSeconds?: number }>).map(
        (r) => (r.IntervalSeconds ?? 1) * 1000 * opts.timeScale,
      );
    }
    if (state.Type !== 'Task') continue;
    const resource = String(state.Resource);
    const fnArn = String((state.Parameters as Record<string, unknown> | undefined)?.FunctionName ?? '');
    const fn = opts.functions[fnArn];
    if (!fn) throw new Error(`state ${stateName}: no local function for ${fnArn}`);
    // Only a token task's wait is scaled (it stands for the provider's settlement time). A plain
    // Lambda task keeps its own timeout: scaled down, a task slowed by a busy machine would time
    // out locally where the same call in AWS has its full time.
    if (typeof state.TimeoutSeconds === 'number' && resource.endsWith('.waitForTaskToken')) {
      timeoutMs[stateName] = state.TimeoutSeconds * 1000 * opts.timeScale;
      state.TimeoutSeconds = Math.ceil(state.TimeoutSeconds * opts.timeScale) + 1; // integer for the validator; for token tasks our own (exact) timer fires first
    }
    if (resource.endsWith('.waitForTaskToken')) {
      taskResourceLocalHandlers[stateName] = async (input) => {
        const payload = (input as { Payload?: Record<string, unknown> }).Payload ?? {};
        const token = String(payload.task_token ?? '');
        const entry = tokens.get(token);
        if (!entry) throw Object.assign(new Error('task token missing from Payload'), { name: 'States.Runtime' });
        const waiting = new Promise<unknown>((resolve, reject) => {
          entry.resolve = resolve;
          entry.reject = reject;
        });
        // The function may answer its own token (SendTaskFailure) before it returns: the rejection
        // is handled below, once the function is done, not reported as unhandled in between.
        waiting.catch(() => undefined);
        const limit = timeoutMs[stateName];
        const timer =
          limit !== undefined
            ? setTimeout(() => close(token, undefined, Object.assign(new Error('task timed out'), { name: 'States.Timeout' })), limit)
            : undefined;
        try {
          await fn(payload);
        } catch (err) {
          close(token, undefined, asStatesError(err));
        }
        try {
          return await waiting;
        } finally {
          if (timer) clearTimeout(timer);
        }
      };
    } else {
      taskResourceLocalHandlers[stateName] = async (input) => {
        try {
          const result = await fn((input as { Payload?: unknown }).Payload ?? input);
          return { ExecutedVersion: '$LATEST', Payload: result ?? null, StatusCode: 200 };
        } catch (err) {
          throw asStatesError(err);
        }
      };
    }
  }

  function close(token: string, value: unknown, error?: Error): boolean {
    const entry = tokens.get(token);
    if (!entry || entry.closed) return false;
    entry.closed = true;
    if (error) entry.reject(error);
    else entry.resolve(value);
    return true;
  }

  const machine = new StateMachine(definition, { validationOptions: { checkArn: false } });

  function start(name: string, input: string): Execution {
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(name)) throw new ApiError('InvalidName', `invalid execution name ${name}`);
    if (executions.has(name)) throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${name}'`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(input);
    } catch {
      throw new ApiError('InvalidExecutionInput', 'input is not JSON');
    }
    const executionArn = `arn:aws:states:${region}:000000000000:execution:${opts.name}:${name}`;
    let current = '';
    const context = {
      Execution: { Id: executionArn, Name: name, Input: parsed as never, StartTime: new Date().toISOString() },
      StateMachine: { Id: stateMachineArn, Name: opts.name },
      Task: {
        get Token() {
          const token = `local-${randomUUID()}`;
          tokens.set(token, { resolve: () => undefined, reject: () => undefined, closed: false, executionArn, state: current });
          return token;
        },
      },
    };
    const run = machine.run(parsed as never, {
      overrides: { taskResourceLocalHandlers: taskResourceLocalHandlers as never, waitTimeOverrides, retryIntervalOverrides },
      context,
      noThrowOnAbort: true,
    });
    const exec: Execution = { executionArn, name, input, status: 'RUNNING', startDate: Date.now(), history: [], abort: run.abort };
    executions.set(name, exec);
    byArn.set(executionArn, exec);
    void (async () => {
      for await (const ev of run.eventLogs) {
        const e = ev as { type: string; timestamp: number; state?: { name: string }; Error?: string };
        if (e.state) current = e.state.name;
        exec.history.push({
          timestamp: e.timestamp,
          type: e.type,
          ...(e.state ? { state: e.state.name } : {}),
          ...(e.Error ? { error: e.Error } : {}),
        });
      }
    })().catch(() => undefined);
    run.result.then(
      (out) => {
        if (exec.status === 'RUNNING') Object.assign(exec, { status: 'SUCCEEDED', output: JSON.stringify(out), stopDate: Date.now() });
        opts.log?.(`execution ${name} SUCCEEDED`);
      },
      (err: Error & { cause?: unknown }) => {
        Object.assign(exec, { status: 'FAILED', error: err.name, cause: err.message, stopDate: Date.now() });
        opts.log?.(`execution ${name} FAILED: ${err.name} ${err.message}`);
      },
    );
    return exec;
  }

  const actions: Record<string, (b: Record<string, unknown>) => unknown> = {
    StartExecution: (b) => {
      if (b.stateMachineArn !== stateMachineArn)
        throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(b.stateMachineArn)}'`);
      const e = start(String(b.name ?? randomUUID()), String(b.input ?? '{}'));
      return { executionArn: e.executionArn, startDate: e.startDate / 1000 };
    },
    DescribeExecution: (b) => {
      const e = byArn.get(String(b.executionArn));
      if (!e) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(b.executionArn)}'`);
      return {
        executionArn: e.executionArn,
        stateMachineArn,
        name: e.name,
        status: e.status,
        startDate: e.startDate / 1000,
        input: e.input,
        ...(e.stopDate ? { stopDate: e.stopDate / 1000 } : {}),
        ...(e.output ? { output: e.output } : {}),
        ...(e.error ? { error: e.error, cause: e.cause } : {}),
      };
    },
    GetExecutionHistory: (b) => {
      const e = byArn.get(String(b.executionArn));
      if (!e) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(b.executionArn)}'`);
      return {
        events: e.history.map((h, i) => ({
          id: i + 1,
          timestamp: h.timestamp / 1000,
          type: h.type,
          ...(h.state ? { stateEnteredEventDetails: { name: h.state } } : {}),
          ...(h.error ? { executionFailedEventDetails: { error: h.error } } : {}),
        })),
      };
    },
    StopExecution: (b) => {
      const e = byArn.get(String(b.executionArn));
      if (!e) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(b.executionArn)}'`);
      if (e.status === 'RUNNING') {
        Object.assign(e, { status: 'ABORTED', stopDate: Date.now() });
        e.abort();
      }
      return { stopDate: Date.now() / 1000 };
    },
    SendTaskSuccess: (b) => {
      const token = String(b.taskToken);
      const entry = tokens.get(token);
      if (!entry) throw new ApiError('TaskDoesNotExist', 'Task Does Not Exist');
      let output: unknown;
      try {
        output = JSON.parse(String(b.output));
      } catch {
        throw new ApiError('InvalidOutput', 'output is not JSON');
      }
      if (!close(token, output)) throw new ApiError('TaskTimedOut', 'Task Timed Out');
      return {};
    },
    SendTaskFailure: (b) => {
      const token = String(b.taskToken);
      if (!tokens.has(token)) throw new ApiError('TaskDoesNotExist', 'Task Does Not Exist');
      const err = Object.assign(new Error(String(b.cause ?? '')), { name: String(b.error ?? 'States.TaskFailed') });
      if (!close(token, undefined, err)) throw new ApiError('TaskTimedOut', 'Task Timed Out');
      return {};
    },
    SendTaskHeartbeat: (b) => {
      const entry = tokens.get(String(b.taskToken));
      if (!entry) throw new ApiError('TaskDoesNotExist', 'Task Does Not Exist');
      if (entry.closed) throw new ApiError('TaskTimedOut', 'Task Timed Out');
      return {};
    },
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const action = target.replace(/^AWSStepFunctions\./, '');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify(body));
    };
    try {
      const fn = actions[action];
      if (!fn) throw new ApiError('UnknownOperationException', `operation ${action} is not emulated`);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      send(200, fn(body));
    } catch (err) {
      if (err instanceof ApiError) send(err.status, { __type: err.type, message: err.message });
      else send(500, { __type: 'InternalFailure', message: (err as Error).message });
    }
  }
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stateMachineArn,
    executions: () => executions,
    stop: async () => {
      for (const e of executions.values()) if (e.status === 'RUNNING') e.abort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/** A Lambda failure as Step Functions names it: the error's name (its errorType). */
function asStatesError(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  return Object.assign(new Error(e.message), { name: e.name && e.name !== 'Error' ? e.name : 'Error' });
}
