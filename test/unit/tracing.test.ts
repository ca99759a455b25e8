/**
 * Tracing (issue 11): every entry point runs inside `instrumented`, which in Lambda (active
 * tracing) opens the Powertools `## <handler>` subsegment with the cold-start and service
 * annotations, records an escaping error on it, and restores the function's segment afterwards.
 * The Lambda environment is simulated with the variables the runtime sets (the X-Ray SDK builds the
 * facade segment from `_X_AMZN_TRACE_ID`); segments go over UDP to a daemon address nobody listens on.
 */
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
  let tracer: typeof import('../../shared/runtime/tracer').tracer;

  beforeAll(() => {
    Object.assign(process.env, LAMBDA_ENV);
    jest.isolateModules(() => {
      ({ instrumented } = require('../../shared/runtime/instrument'));
      ({ tracer } = require('../../shared/runtime/tracer'));
    });
  });
  afterAll(() => {
    for (const k of Object.keys(LAMBDA_ENV)) delete process.env[k];
    Object.assign(process.env, saved);
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

describe('outside Lambda (npm start, tests)', () => {
  it('the tracer is disabled and instrumented only passes the result through', async () => {
    const { tracer } = require('../../shared/runtime/tracer') as typeof import('../../shared/runtime/tracer');
    const { instrumented } = require('../../shared/runtime/instrument') as typeof import('../../shared/runtime/instrument');
    expect(tracer.isTracingEnabled()).toBe(false);
    await expect(instrumented(async () => 'ok')()).resolves.toBe('ok');
  });
});
