import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FilePriceFeed } from '../../shared/adapters/price-feed/file-price-feed';
import { currentPrice } from '../../shared/use-cases/prices';
import { api, stackDataDir, token, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * On the local stack: the price-feed file written at start (docs/api/lending.md#price-feed) and
 * GET /farmers/{id}/credit-score from the service's own records.
 */

describe('price feed file of the local stack', () => {
  it('is written at start with fresh default prices, readable by the file adapter', async () => {
    const path = join(stackDataDir(), 'price-feed.json');
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { updated_at: string; usd_per_kg: Record<string, number> };
    expect(doc.usd_per_kg).toEqual({ screen18: 6.2, screen15: 5.8, FAQ: 5.1, PB: 6 });
    expect(Date.now() - Date.parse(doc.updated_at)).toBeLessThan(3_600_000);
    await expect(currentPrice(new FilePriceFeed(path), 'screen18', new Date())).resolves.toMatchObject({
      usd_micro_per_kg: 6_200_000,
      source: path,
    });
  });
});

describe('GET /farmers/{id}/credit-score', () => {
  it('scores a farmer from its delivered batches; MFI reads it, another cooperative gets 403, an unknown farmer 404', async () => {
    const c = await setUpCooperative();
    const farmerId = await registerFarmer(c.id, c.coop, '+256772000123');
    for (const [grade, weight_kg] of [
      ['screen18', 150],
      ['FAQ', 50],
    ] as const) {
      const res = await api('POST', '/batch/submit', { token: c.agent, body: batchBody(farmerId, c.id, { grade, weight_kg }) });
      expect([201, 202]).toContain(res.status);
    }
    const score = await waitFor(
      () => api('GET', `/farmers/${farmerId}/credit-score`, { token: c.coop }),
      (r) => r.status === 200 && r.body.factors.find((f: { name: string }) => f.name === 'deliveries').value === 2,
    );
    const factors = Object.fromEntries(
      (score.body.factors as Array<{ name: string; value: number; effect: number }>).map((f) => [f.name, [f.value, f.effect]]),
    );
    // quality: floor((150×100 + 50×40) / 200) = 85 → floor(85×60/100) − 30 = 21
    expect(factors).toMatchObject({
      deliveries: [2, 8],
      volume_kg: [200, 2],
      quality: [85, 21],
      loans_repaid_on_time: [0, 0],
      defaults: [0, 0],
      tenure_days: [0, 0],
    });
    expect(score.body).toMatchObject({ farmer_id: farmerId, formula_version: '1', score: 500 + 8 + 2 + 21, band: 'E' });

    const mfi = await token({ role: 'MFI', mfi_id: 'MFI-TEST', sub: 'mfi-user' });
    expect((await api('GET', `/farmers/${farmerId}/credit-score`, { token: mfi })).body).toMatchObject({ score: 531 });
    const other = await setUpCooperative();
    const forbidden = await api('GET', `/farmers/${farmerId}/credit-score`, { token: other.coop });
    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const unknown = await api('GET', '/farmers/UG-MBL-NOBODY/credit-score', { token: c.admin });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'FARMER_NOT_REGISTERED']);
  });
});
