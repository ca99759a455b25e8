/**
 * Tracing (issue 11): every entry point runs inside `instrumented`, which in Lambda (active
 * tracing) opens the Powertools `## <handler>` subsegment with the cold-start and service
 * annotations, records an escaping error on it, and restores the function's segment afterwards.
 * The Lambda environment is simulated with the variables the runtime sets (the X-Ray SDK builds the
 * facade segment from `_X_AMZN_TRACE_ID`); segments go over UDP to a daemon address nobody listens on.
 */
// `@aws-lambda-powertools/tracer` imports the X-Ray SDK (and so creates its cls-hooked async hook) as
// it loads: whether the Tracer package is imported tells whether the X-Ray SDK is.
type Sub = { name: string; annotations?: Record<string, unknown>; cause?: unknown; isClosed(): boolean };

const LAMBDA_ENV = {
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  LAMBDA_TASK_ROOT: '/var/task',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  AWS_LAMBDA_FUNCTION_NAME: 'coffee-trace-test',
  _HANDLER: 'index.handler',
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:9',
  AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
  POWERTOOLS_SERVICE_NAME: 'coffee-trace-test',
  POWERTOOLS_TRACE_ENABLED: 'true',
};

describe('instrumented entry points in Lambda', () => {
  const saved = { ...process.env };
  let instrumented: typeof import('../../shared/runtime/instrument').instrumented;
  let tracer: import('@aws-lambda-powertools/tracer').Tracer;
  let tracerImported = false;

  beforeAll(async () => {
    Object.assign(process.env, LAMBDA_ENV);
    let loadTracer!: typeof import('../../shared/runtime/tracer').loadTracer;
    jest.isolateModules(() => {
      jest.doMock('@aws-lambda-powertools/tracer', () => {
        tracerImported = true;
        return jest.requireActual('@aws-lambda-powertools/tracer');
      });
      ({ instrumented } = require('../../shared/runtime/instrument'));
      ({ loadTracer } = require('../../shared/runtime/tracer'));
    });
    tracer = (await loadTracer())!;
  });
  afterAll(() => {
    for (const k of Object.keys(LAMBDA_ENV)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('imports the Tracer and with it the X-Ray SDK', () => {
    expect(tracer).toBeDefined();
    expect(tracerImported).toBe(true);
  });

  it('runs the handler in a "## index.handler" subsegment annotated with ColdStart and Service, then restores the segment', async () => {
    expect(tracer.isTracingEnabled()).toBe(true);
    const facade = tracer.getSegment();
    let inside: Sub | undefined;
    const handler = instrumented(async (n: number) => {
      inside = tracer.getSegment() as unknown as Sub;
      return n * 2;
    });
    await expect(handler(21)).resolves.toBe(42);
    expect(inside!.name).toBe('## index.handler');
    expect(inside!.annotations).toMatchObject({ ColdStart: true, Service: 'coffee-trace-test' });
    expect(inside!.isClosed()).toBe(true);
    expect(tracer.getSegment()).toBe(facade);

    await handler(1); // the second invocation of the container is warm
    expect(inside!.annotations).toMatchObject({ ColdStart: false });
  });

  it('records an escaping error on the subsegment and rethrows it', async () => {
    let inside: Sub | undefined;
    const handler = instrumented(async () => {
      inside = tracer.getSegment() as unknown as Sub;
      throw new Error('ledger down');
    });
    await expect(handler()).rejects.toThrow('ledger down');
    expect(JSON.stringify(inside!.cause)).toContain('ledger down');
    expect(inside!.isClosed()).toBe(true);
  });
});

describe('outside Lambda (npm start, tests) and with POWERTOOLS_TRACE_ENABLED=false', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  /** Loads the runtime modules afresh under `env`, an invocation and a traced client made; reports whether the X-Ray SDK was imported. */
  async function run(env: Record<string, string>) {
    Object.assign(process.env, env);
    let tracerImported = false;
    let modules!: { instrument: typeof import('../../shared/runtime/instrument'); tracer: typeof import('../../shared/runtime/tracer') };
    jest.isolateModules(() => {
      jest.doMock('@aws-lambda-powertools/tracer', () => {
        tracerImported = true;
        return jest.requireActual('@aws-lambda-powertools/tracer');
      });
      modules = { instrument: require('../../shared/runtime/instrument'), tracer: require('../../shared/runtime/tracer') };
    });
    const client = { middlewareStack: { add: jest.fn(), remove: jest.fn() } };
    const result = await modules.instrument.instrumented(async () => 'ok')();
    const same = modules.tracer.traced(client) === client && client.middlewareStack.add.mock.calls.length === 0;
    return { result, same, tracer: await modules.tracer.loadTracer(), tracerImported };
  }

  it('outside Lambda: the Tracer and the X-Ray SDK are never imported, instrumented only passes the result through', async () => {
    delete process.env.AWS_EXECUTION_ENV;
    await expect(run({})).resolves.toEqual({ result: 'ok', same: true, tracer: undefined, tracerImported: false });
  });

  it('in Lambda with POWERTOOLS_TRACE_ENABLED=false: not imported either', async () => {
    await expect(run({ ...LAMBDA_ENV, POWERTOOLS_TRACE_ENABLED: 'false' })).resolves.toEqual({
      result: 'ok',
      same: true,
      tracer: undefined,
      tracerImported: false,
    });
  });
});

describe('tracingEnabled', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  // The rule must be Powertools' own: each environment is given to a real Tracer too.
  it.each([
    ['in Lambda', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' }, true],
    ['in Lambda, POWERTOOLS_TRACE_ENABLED=true', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'true' }, true],
    ['in Lambda, POWERTOOLS_TRACE_ENABLED=FALSE', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'FALSE' }, false],
    ['under the SAM CLI', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_SAM_LOCAL: 'true' }, false],
    ['under the Amplify mock', { AWS_EXECUTION_ENV: 'AWS_Lambda_amplify-mock' }, false],
    ['outside Lambda', {}, false],
    ['outside Lambda, POWERTOOLS_TRACE_ENABLED=true', { POWERTOOLS_TRACE_ENABLED: 'true' }, false],
  ])('%s', (_, env: Record<string, string>, expected) => {
    for (const k of ['AWS_EXECUTION_ENV', 'AWS_SAM_LOCAL', 'POWERTOOLS_TRACE_ENABLED']) delete process.env[k];
    Object.assign(process.env, env, { AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' });
    const { tracingEnabled } = require('../../shared/runtime/tracer') as typeof import('../../shared/runtime/tracer');
    const { Tracer } = require('@aws-lambda-powertools/tracer') as typeof import('@aws-lambda-powertools/tracer');
    expect(tracingEnabled()).toBe(expected);
    expect(new Tracer({ captureHTTPsRequests: false }).isTracingEnabled()).toBe(expected);
  });
});
