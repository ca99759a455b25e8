import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, stackDataDir, stackUrl, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Business metrics on the local stack (issue 11): the functions' EMF lines land in
 * `$LOCAL_DATA_DIR/metrics.ndjson`, where an operator reads them (docs/operations.md#operating). A batch
 * submitted and paid shows its ledger write's lag, the payout's creation, completion and time to
 * COMPLETED; an unsigned webhook shows as a rejection with its reason.
 */

type Emf = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string; Unit: string }> }> };
};

const metricsFile = () => join(stackDataDir(), 'metrics.ndjson');
function readMetrics(): Emf[] {
  if (!existsSync(metricsFile())) return [];
  return readFileSync(metricsFile(), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Emf);
}
/** Values of `name` in the file's lines matching `where`, flattened. */
const valuesOf = (docs: Emf[], name: string, where: Record<string, string> = {}) =>
  docs
    .filter((d) => Object.entries(where).every(([k, v]) => d[k] === v))
    .flatMap((d) => (d[name] === undefined ? [] : ([d[name]].flat() as number[])));

describe('metrics file of the local stack', () => {
  it('a paid batch: ledger write lag, payout created and completed with its time to COMPLETED', async () => {
    const ctx = await setUpCooperative();
    const before = readMetrics();
    const farmer = await registerFarmer(ctx.id, ctx.agent, '+256772000123');
    const submit = await api('POST', '/batch/submit', { token: ctx.agent, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId: string = submit.body.data.batch_id;
    const list = await waitFor(
      () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
      (r) => r.body.payments?.length > 0,
      15_000,
    );
    const payoutId: string = list.body.payments[0].payment_id;
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      20_000,
    );
    expect(done.body.status).toBe('COMPLETED');

    const after = await waitFor(
      async () => readMetrics().slice(before.length),
      (docs) => valuesOf(docs, 'PayoutsCompleted').length > 0,
      5_000,
    );
    expect(valuesOf(after, 'PayoutsCreated').length).toBeGreaterThanOrEqual(1);
    expect(valuesOf(after, 'PayoutsCompleted').length).toBeGreaterThanOrEqual(1);
    const times = valuesOf(after, 'PayoutTimeToCompleted');
    expect(times.length).toBeGreaterThanOrEqual(1);
    for (const ms of times) expect(ms).toBeGreaterThanOrEqual(0);
    expect(valuesOf(after, 'LedgerWriteLag').length).toBeGreaterThanOrEqual(1);
    for (const d of after) {
      expect(d._aws.CloudWatchMetrics[0]!.Namespace).toBe('CoffeeTrace');
      expect(d.service).toBe('coffee-trace');
    }
  });

  it('an unsigned payout webhook: a WebhookRejections line with webhook payout-provider and reason INVALID_SIGNATURE', async () => {
    const before = readMetrics().length;
    const res = await fetch(`${stackUrl()}/api/webhooks/payout-provider`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":"order.settled","data":{}}',
    });
    expect(res.status).toBe(401);
    const docs = await waitFor(
      async () => readMetrics().slice(before),
      (d) => valuesOf(d, 'WebhookRejections').length > 0,
      5_000,
    );
    expect(valuesOf(docs, 'WebhookRejections', { webhook: 'payout-provider', reason: 'INVALID_SIGNATURE' })).toContain(1);
  });
});
