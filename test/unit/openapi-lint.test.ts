import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ERROR_CODES } from '../../shared/domain/error-catalogue';
import { openApiDocument } from '../../shared/http/openapi';
import { batchView, cooperativeView, farmerView, paymentRecordView, payoutStatusView } from '../../shared/http/views';
import { routes } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { aBatch, aCooperative, aFarmer, aPayout } from './support/fakes';

/**
 * The OpenAPI document (issue 11): linted by `@redocly/cli lint` with its recommended rules (zero
 * errors; warnings are printed), and complete: every route with success responses carrying a
 * schema and an example, its error responses by status, a security scheme, and the outbound
 * webhooks of decisions §12.
 */

const run = promisify(execFile);
type Op = { security: unknown[]; parameters: Array<{ name: string; in: string }>; responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }> };
const doc = openApiDocument('https://api.example.test') as unknown as {
  paths: Record<string, Record<string, Op>>;
  webhooks: Record<string, { post: Op & { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }>;
  components: { securitySchemes: Record<string, unknown>; examples: Record<string, { value: { error: { docs: string } } }> };
};
const opOf = (r: (typeof routes)[number]) => doc.paths[r.path]![r.method.toLowerCase()]!;
const responseSchema = (fn: string, status = '200') => {
  const r = routes.find((x) => x.fn === fn)!;
  return opOf(r).responses[status]!.content!['application/json']!.schema as { properties: Record<string, unknown>; required: string[] };
};

describe('the OpenAPI document', () => {
  it('passes @redocly/cli lint with the recommended rules (zero errors)', async () => {
    // Arrange
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));

    // Act
    let stdout: string;
    try {
      ({ stdout } = await run(join(repoRoot(), 'node_modules/.bin/redocly'), ['lint', file, '--format=json', '--extends=recommended'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 }));
    } catch (err) {
      stdout = (err as { stdout: string }).stdout; // exit code 1 on errors: the JSON report is still on stdout
    } finally {
      setTimeout(() => rmSync(dir, { recursive: true, force: true }), 0);
    }
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> };

    // Assess
    const list = (sev: string) => report.problems.filter((p) => p.severity === sev).map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    if (report.totals.warnings) process.stdout.write(`redocly lint warnings:\n${list('warn').join('\n')}\n`);
    expect(list('error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('gives every route a success response with a schema and an example, and its error responses', () => {
    for (const r of routes) {
      const op = opOf(r);
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => s.startsWith('2'));
      expect({ route: `${r.method} ${r.path}`, success: success.length > 0 }).toEqual({ route: `${r.method} ${r.path}`, success: true });
      for (const s of success) {
        const media = Object.values(op.responses[s]!.content ?? {})[0];
        expect(media?.schema).toBeDefined();
        expect(media?.example ?? media?.examples).toBeDefined();
      }
      expect(statuses).toContain('429');
      expect(statuses).toContain('500');
      if (r.auth === 'jwt') expect(statuses).toEqual(expect.arrayContaining(['401', '403']));
      if (r.auth === 'webhook') expect(statuses).toContain('401');
      if (r.path.includes('{id}') && r.method === 'GET') expect(statuses).toEqual(expect.arrayContaining(['400', '404']));
    }
    expect(Object.keys(responseSchema('create-loan', '202').properties)).toContain('loan_id');
    const loan = opOf(routes.find((r) => r.fn === 'create-loan')!).responses;
    expect(Object.keys(loan)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '404', '409', '422', '429', '500', '503']));
  });

  it('lists every error code of the catalogue with its status, linking to /docs/errors#CODE', () => {
    const answered = new Set<string>();
    for (const r of routes) {
      for (const [status, resp] of Object.entries(opOf(r).responses)) {
        for (const ref of Object.values((resp.content?.['application/json']?.examples ?? {}) as Record<string, { $ref?: string }>)) {
          const code = ref.$ref?.split('/').pop();
          if (code && code in ERROR_CODES) {
            expect({ code, status: Number(status) }).toEqual({ code, status: ERROR_CODES[code as keyof typeof ERROR_CODES].status });
            answered.add(code);
          }
        }
      }
    }
    const reserved = ['MAAIF_API_UNAVAILABLE', 'DDS_TRACES_PENDING', 'AUDIT_LOG_UNAVAILABLE', 'ROUTE_NOT_FOUND'];
    expect([...new Set([...answered, ...reserved])].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(doc.components.examples.BATCH_NOT_FOUND!.value.error.docs).toBe('https://api.example.test/docs/errors#BATCH_NOT_FOUND');
  });

  it('has security schemes: bearer JWT for jwt routes, the Standard Webhooks headers for webhook routes, none for public ones', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerAuth', 'standardWebhooks']);
    for (const r of routes) {
      const op = opOf(r);
      const expected = r.auth === 'jwt' ? [{ bearerAuth: [] }] : r.auth === 'webhook' ? [{ standardWebhooks: [] }] : [];
      expect({ route: r.path, security: op.security }).toEqual({ route: r.path, security: expected });
      if (r.auth === 'webhook') expect(op.parameters.filter((p) => p.in === 'header').map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    }
  });

  it('documents the outbound webhooks of decisions §12 with body {type, timestamp, data}', () => {
    const events = ['batch.stage_changed', 'payout.completed', 'payout.manual_review', 'job.completed', 'dds.generated', 'loan.disbursed', 'loan.repaid', 'deposit.completed'];
    expect(Object.keys(doc.webhooks)).toEqual(expect.arrayContaining(events));
    for (const e of events) {
      const hook = doc.webhooks[e]!.post;
      expect(Object.keys(hook.requestBody.content['application/json']!.schema.properties)).toEqual(['type', 'timestamp', 'data']);
      expect(hook.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature']));
    }
  });

  it('describes exactly the fields the views produce', () => {
    // The documented response schemas name the same fields as the views applied to records.
    const keys = (o: object) => Object.keys(o).sort();
    expect(keys(responseSchema('get-batch').properties)).toEqual(keys(batchView(aBatch())));
    expect(keys(responseSchema('get-farmer').properties)).toEqual(keys(farmerView(aFarmer({ gfw_checked_at: '2026-01-01T00:00:00.000Z', gfw_dataset: { name: 'x', version: '1' } } as never))));
    expect(keys(responseSchema('get-cooperative').properties)).toEqual(keys(cooperativeView(aCooperative())));
    expect(keys(responseSchema('get-farmer-payout').properties)).toEqual(keys(payoutStatusView(aPayout())));
    const payment = responseSchema('get-payment') as unknown as { oneOf: Array<{ properties: object }> };
    expect(keys(payment.oneOf[0]!.properties)).toEqual(keys(paymentRecordView(aPayout())));
  });
});
