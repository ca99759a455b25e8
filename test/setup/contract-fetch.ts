import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContractValidator, type OpenApiDoc } from '../support/contract';

/**
 * Integration tests only: every response the local stack sends to a test (through `api()` in
 * test/support/api.ts, the typed client, or a bare `fetch`) is validated against the document the
 * stack serves at GET /openapi.json. A response that drifts from the contract makes the call throw
 * and fails the test file in `afterAll`, even if the test swallowed the error. Requests sent invalid
 * on purpose are not exempt: their responses are validated like any other. Counts go to
 * CONTRACT_COUNT_DIR for the global teardown's summary line.
 */
const originalFetch = globalThis.fetch;
const stackUrl = process.env.TEST_STACK_URL;
let validator: Promise<ContractValidator> | undefined;
const tally = { validated: 0, unmatched: [] as string[], invalid: [] as string[] };

function load(): Promise<ContractValidator> {
  validator ??= originalFetch(`${stackUrl}/openapi.json`)
    .then((r) => r.json() as Promise<OpenApiDoc>)
    .then((doc) => new ContractValidator(doc));
  return validator;
}

if (stackUrl) {
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await originalFetch(input, init);
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (`${url.protocol}//${url.host}` !== new URL(stackUrl).origin) return res;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    // A followed redirect to another origin (a presigned storage URL) is not the stack's answer.
    if (res.redirected && new URL(res.url).origin !== new URL(stackUrl).origin) {
      tally.unmatched.push(`${method.toUpperCase()} ${url.pathname} → redirected outside the stack`);
      return res;
    }
    const body = await res.clone().text();
    const result = (await load()).validate({
      method,
      path: url.pathname,
      status: res.status,
      contentType: res.headers.get('content-type'),
      body,
    });
    if (result.kind === 'unmatched') tally.unmatched.push(`${method.toUpperCase()} ${url.pathname} → ${res.status}`);
    else if (result.kind === 'invalid') {
      const message = `response of ${result.operation} (${method.toUpperCase()} ${url.pathname} → ${res.status}) drifts from the OpenAPI document:\n  ${result.problems.join('\n  ')}\n  body: ${body.slice(0, 400)}`;
      tally.invalid.push(message);
      throw new Error(message);
    } else tally.validated += 1;
    return res;
  };

  afterAll(() => {
    const dir = process.env.CONTRACT_COUNT_DIR;
    if (dir) writeFileSync(join(dir, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`), JSON.stringify(tally));
    if (tally.invalid.length > 0) {
      const distinct = [...new Set(tally.invalid.map((m) => m.split('\n  body:')[0]))];
      throw new Error(
        `${tally.invalid.length} response(s) drifted from the OpenAPI document (${distinct.length} distinct):\n${distinct.join('\n')}`,
      );
    }
  });
}
