import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { openApiDocument } from '../../shared/http/openapi';
import { batchView, cooperativeView, farmerView, paymentRecordView, payoutStatusView } from '../../shared/http/views';
import {
  OUTBOUND_EVENT_TYPES,
  outboundEventsOfChange,
  type OutboundDelivery,
  type RevealedEndpoint,
} from '../../shared/domain/outbound-webhooks';
import {
  DeliveryIdParam,
  deliveryView,
  EndpointIdParam,
  endpointView,
  endpointWithSecretView,
} from '../../shared/http/outbound-webhook-schemas';
import { OUTBOUND_EVENT_EXAMPLES } from '../../shared/http/openapi-example-events';
import * as v from 'valibot';
import { routes } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { aBatch, aCooperative, aFarmer, aPayout } from './support/fakes';

/**
 * The OpenAPI document (issue 11): linted by `@redocly/cli lint` with its recommended rules (zero
 * errors; warnings are printed), and complete: every route with success responses carrying a
 * schema and an example, its error responses by status, a security scheme, and the outbound
 * webhooks of docs/api/outbound-webhooks.md#outbound-webhooks.
 */

const run = promisify(execFile);
type Op = {
  security: unknown[];
  parameters: Array<{ name: string; in: string }>;
  responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }>;
};
const doc = openApiDocument('https://api.example.test') as unknown as {
  paths: Record<string, Record<string, Op>>;
  webhooks: Record<
    string,
    { post: Op & { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }
  >;
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
      ({ stdout } = await run(join(repoRoot(), 'node_modules/.bin/redocly'), ['lint', file, '--format=json', '--extends=recommended'], {
        cwd: dir,
        maxBuffer: 32 * 1024 * 1024,
      }));
    } catch (err) {
      stdout = (err as { stdout: string }).stdout; // exit code 1 on errors: the JSON report is still on stdout
    } finally {
      setTimeout(() => rmSync(dir, { recursive: true, force: true }), 0);
    }
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };

    // Assess
    const list = (sev: string) =>
      report.problems.filter((p) => p.severity === sev).map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    if (report.totals.warnings) process.stdout.write(`redocly lint warnings:\n${list('warn').join('\n')}\n`);
    expect(list('error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // The payment kinds are named schemas: no warning about the /payments/{id} union.
    expect(list('warn').filter((w) => w.includes('~1payments~1{id}') || w.includes('/payments/{id}'))).toEqual([]);
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
      if (r.auth === 'webhook')
        expect(op.parameters.filter((p) => p.in === 'header').map((p) => p.name)).toEqual([
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
        ]);
    }
  });

  it('documents the outbound webhooks of docs/api/outbound-webhooks.md#outbound-webhooks with body {type, timestamp, data}', () => {
    const events = [
      'batch.stage_changed',
      'payout.completed',
      'payout.manual_review',
      'job.completed',
      'dds.generated',
      'loan.disbursed',
      'loan.repaid',
      'deposit.completed',
    ];
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
    {
      const farmerSchema = responseSchema('get-farmer') as unknown as { properties: object; required: string[] };
      const view = farmerView(aFarmer({ gfw_checked_at: '2026-01-01T00:00:00.000Z', gfw_dataset: { name: 'x', version: '1' } } as never));
      // Every field the view shows is declared; every required field is shown (the others are optional: phone changes, forest-check facts).
      expect(keys(farmerSchema.properties)).toEqual(expect.arrayContaining(keys(view)));
      expect(keys(view)).toEqual(expect.arrayContaining(farmerSchema.required));
    }
    expect(keys(responseSchema('get-cooperative').properties)).toEqual(keys(cooperativeView(aCooperative())));
    expect(keys(responseSchema('get-farmer-payout').properties)).toEqual(keys(payoutStatusView(aPayout())));
    const farmerPayout = (doc as unknown as { components: { schemas: Record<string, { properties: object }> } }).components.schemas
      .FarmerPayoutPayment!;
    expect(keys(farmerPayout.properties)).toEqual(keys(paymentRecordView(aPayout())));
  });

  it('describes the outbound webhook routes with the fields and ids their views produce', () => {
    // Arrange: records as the store holds them, independent of the document's examples
    const keys = (o: object) => Object.keys(o).sort();
    const e: RevealedEndpoint = {
      endpoint_id: 'whe_01JD7Q0S6W3M8Z4R2N5B9X1CTE',
      owner: { kind: 'MFI', id: 'MFI-1' },
      url: 'https://x.example/h',
      events: ['deposit.completed'],
      status: 'ACTIVE',
      secret: 'whsec_x',
      created_at: 't',
      created_by: 's',
      updated_at: 't',
    };
    const event = outboundEventsOfChange(undefined, {
      entity: 'BATCH',
      batch_id: 'B',
      stage_history: [{ stage: 'DELIVERED', at: 't', chain_tx_hash: '0xaa' }],
    })[0]!;
    const d: OutboundDelivery = {
      delivery_id: 'whd_x',
      endpoint_id: e.endpoint_id,
      event,
      state: 'PENDING',
      attempts: 0,
      round_attempts: 0,
      created_at: 't',
      updated_at: 't',
    };
    const example = (fn: string, status: string) =>
      opOf(routes.find((r) => r.fn === fn)!).responses[status]!.content!['application/json']!.example as Record<string, unknown>;

    // Assess: the schemas name the views' fields
    expect(keys(responseSchema('create-webhook-endpoint', '201').properties)).toEqual(keys(endpointWithSecretView(e)));
    expect(keys(responseSchema('rotate-webhook-secret').properties)).toEqual(keys(endpointWithSecretView(e)));
    const items = (fn: string, list: string) => (responseSchema(fn).properties[list] as { items: { properties: object } }).items.properties;
    expect(keys(items('list-webhook-endpoints', 'endpoints'))).toEqual(keys(endpointView(e)));
    expect(keys(items('list-webhook-deliveries', 'deliveries'))).toEqual(keys(deliveryView(d)));
    expect(keys(responseSchema('replay-webhook-delivery', '202').properties)).toEqual(keys(deliveryView(d)));
    // and the examples carry real ids
    const created = example('create-webhook-endpoint', '201');
    expect(v.is(EndpointIdParam, created.endpoint_id)).toBe(true);
    expect(created.secret).toMatch(/^whsec_/);
    const logged = example('list-webhook-deliveries', '200').deliveries as Array<Record<string, string>>;
    for (const x of [...logged, example('replay-webhook-delivery', '202')]) {
      expect(v.is(DeliveryIdParam, x.delivery_id)).toBe(true);
      expect(v.is(EndpointIdParam, x.endpoint_id)).toBe(true);
      expect(x.event_id).toMatch(/^evt_/);
    }
    expect(example('replay-webhook-delivery', '202').state).toBe('PENDING');
  });

  it('documents each outbound event with the data the event mapper sends', () => {
    for (const type of OUTBOUND_EVENT_TYPES) {
      // Arrange
      const content = doc.webhooks[type]!.post.requestBody.content['application/json']! as unknown as {
        schema: { properties: { data: { properties: Record<string, { type: unknown }>; required: string[] } } };
        example?: { type: string; data: Record<string, unknown> };
        examples?: Record<string, { value: { type: string; data: Record<string, unknown> } }>;
      };
      const bodies = content.example ? [content.example] : Object.values(content.examples!).map((x) => x.value);
      const data = content.schema.properties.data;

      // Assess: every example's data fits the schema (no undocumented field, every required one present, no nulls)
      expect(OUTBOUND_EVENT_EXAMPLES[type]!.event_id).toMatch(/^evt_/);
      for (const body of bodies) {
        expect(body.type).toBe(type);
        expect(Object.keys(body.data).filter((k) => !(k in data.properties))).toEqual([]);
        expect(data.required.filter((k) => !(k in body.data))).toEqual([]);
        expect(Object.entries(body.data).filter(([, x]) => x === null)).toEqual([]);
        for (const [k, x] of Object.entries(body.data)) {
          if (k.endsWith('_usd_micro')) expect({ k, integer: Number.isInteger(x) }).toEqual({ k, integer: true });
          if (k === 'phone') expect(x).toMatch(/^\+256 \d•• ••• \d{3}$/);
        }
      }
    }
    const dds = doc.webhooks['dds.generated']!.post.requestBody.content['application/json']! as unknown as {
      example: { data: { status: string } };
    };
    expect(dds.example.data.status).toBe('AVAILABLE');
  });
});

describe('the served document speaks of the API', () => {
  it('cites no internal document and uses no multipleOf for decimal places', async () => {
    const { openApiDocument } = await import('../../shared/http/openapi');
    const text = JSON.stringify(openApiDocument('http://127.0.0.1:3000'));
    expect(text).not.toMatch(/decisions §|decisions\.md|interface-spec/);
    expect(text).not.toMatch(/"multipleOf"/);
    expect(text).toMatch(/"x-max-decimals":7/);
  });
  it('types every payment kind apart by payment_type (discriminator) and declares 202 of POST /batch/submit', async () => {
    const { openApiDocument } = await import('../../shared/http/openapi');
    const doc = openApiDocument('http://127.0.0.1:3000') as any;
    const payment = doc.paths['/payments/{id}'].get.responses['200'].content['application/json'].schema;
    // Each kind is a named component schema referenced by $ref, the discriminator mapping to it.
    const names = ['FarmerPayoutPayment', 'LoanDisbursementPayment', 'MfiDepositPayment'];
    expect(payment.oneOf).toEqual(names.map((n) => ({ $ref: `#/components/schemas/${n}` })));
    expect(payment.discriminator).toEqual({
      propertyName: 'payment_type',
      mapping: {
        FARMER_PAYOUT: `#/components/schemas/${names[0]}`,
        LOAN_DISBURSEMENT: `#/components/schemas/${names[1]}`,
        MFI_DEPOSIT: `#/components/schemas/${names[2]}`,
      },
    });
    const branches = names.map((n) => doc.components.schemas[n]);
    expect(branches.map((s: any) => s.properties.payment_type.const)).toEqual(['FARMER_PAYOUT', 'LOAN_DISBURSEMENT', 'MFI_DEPOSIT']);
    expect(branches[2].properties.amount_usdc.type).toBe('number');
    expect(doc.paths['/batch/submit'].post.responses['202']).toBeDefined();
    expect(doc.paths['/batch/{id}'].get.responses['200'].content['application/json'].schema.properties.weight_kg.type).toBe('number');
  });
});
