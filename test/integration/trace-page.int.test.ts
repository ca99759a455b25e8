import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import jsQR from 'jsqr';
import { PNG as PngImage } from 'pngjs';
import QRCode from 'qrcode';
import { QR_OPTIONS } from '../../shared/http/trace-page';
import { repoRoot } from '../../shared/runtime/paths';
import { api, stackUrl, waitFor } from '../support/api';
import { describeWithChromium, headlessChromium } from '../support/chromium';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * The public trace page on the local stack (issue 13, docs/api/trace-page.md#public-trace-page): a batch driven to GRADED
 * with a photo, read without a token as HTML, as JSON and as a QR code; nothing private in either
 * (the fixture's phone, full name and payment amount); then opened in headless Chromium at phone
 * (390 px) and desktop (1280 px) widths, screenshots under test-output/. The QR code the service
 * serves is rendered by Chromium to a PNG (test-output/trace-qr.png) and decoded with jsQR: it must
 * read back as the page's URL.
 */

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PHONE = '+256772000731';

let batchId: string;
let otherBatchId: string;
let paymentAmount: number;
let gradedCid: string;

beforeAll(async () => {
  const ctx = await setUpCooperative({ name: 'Bugisu "Elgon" <Co-op> & Sons' });
  const farmer = await registerFarmer(ctx.id, ctx.coop, PHONE);
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 240.75 }) });
  batchId = submit.body.data.batch_id;
  const other = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 120 }) });
  expect(other.status).toBe(201);
  otherBatchId = other.body.data.batch_id;
  const graded = await api('PATCH', `/batch/${batchId}/stage`, {
    token: ctx.coop,
    body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.2 }, evidence_photo_base64: PNG },
  });
  expect(graded.status).toBe(200);
  gradedCid = graded.body.evidence_ipfs_cid;
  const batch = await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.stage_history?.every((h: { chain_tx_hash: string | null }) => h.chain_tx_hash),
    15_000,
  );
  paymentAmount = batch.body.payment_amount_ugx;
  expect(paymentAmount).toBeGreaterThan(0);
  // The payout's entries settle and the periodic anchor (every 3 s here) commits them: the page then shows Verified.
  await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.payment_status === 'PAYMENT_CONFIRMED',
    30_000,
    250,
  );
  const page = await waitFor(
    () => api('GET', `/trace/${batchId}`, { headers: { accept: 'application/json' } }),
    (r) => r.body.verification?.verified === true,
    30_000,
    250,
  );
  expect(page.body.verification).toMatchObject({ verified: true, awaiting_anchor: 0 });
}, 90_000);

/** The private strings of this batch in the forms they could take. */
const privateStrings = () => [
  PHONE,
  PHONE.slice(1),
  PHONE.slice(4),
  'Joseph Wamala',
  'Wamala',
  String(paymentAmount),
  paymentAmount.toLocaleString('en-US'),
  '+256772123456',
  'Sarah Wanyama',
  'manager@bugisu.example',
];

describe('GET /trace/{id} on the local stack', () => {
  it('answers the page as HTML without a token, with nothing private in it', async () => {
    const res = await fetch(`${stackUrl()}/trace/${batchId}`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    const html = await res.text();
    expect(html).toContain(`Coffee batch ${batchId}`);
    expect(html).toContain('Bugisu &quot;Elgon&quot; &lt;Co-op&gt; &amp; Sons');
    expect(html).toContain('Joseph, Mbale');
    expect(html).toContain(`${stackUrl()}/ipfs/${gradedCid}`);
    expect(html).toMatch(/✔ Verified/);
    for (const s of privateStrings()) expect(html).not.toContain(s);
  });

  it('answers JSON with Accept: application/json, the same view, with the verification of /audit', async () => {
    const res = await api('GET', `/trace/${batchId}`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      batch_id: batchId,
      grade: 'screen18',
      weight_kg: 240.75,
      stage: 'GRADED',
      cooperative: { name: 'Bugisu "Elgon" <Co-op> & Sons', district: 'Mbale' },
      farmer: { first_name: 'Joseph', district: 'Mbale' },
      plot: { source: 'POINT_AND_AREA', area_ha: 1.5 },
      dds_reference_number: null,
      verification: { verified: true, failures: [] },
      page_url: `${stackUrl()}/trace/${batchId}`,
      qr_url: `${stackUrl()}/trace/${batchId}/qr.svg`,
    });
    expect(res.body.stages.map((s: { stage: string }) => s.stage)).toEqual(['DELIVERED', 'GRADED']);
    expect(res.body.stages.every((s: { chain_tx_hash: string }) => /^0x[0-9a-f]{64}$/.test(s.chain_tx_hash))).toBe(true);
    expect(res.body.stages[1].evidence_ipfs_cid).toBe(gradedCid);
    const json = JSON.stringify(res.body);
    for (const s of privateStrings()) expect(json).not.toContain(s);
    expect(json).not.toMatch(/"[a-z_]*(phone|payment|amount|farmer_id|full_name)[a-z_]*":/);
  });

  it('serves the QR code of the page URL as SVG', async () => {
    const res = await fetch(`${stackUrl()}/trace/${batchId}/qr.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    const svg = await res.text();
    // Drawn by qrcode for the page URL (that it decodes to it is proven in headless Chromium below).
    expect(svg).toBe(await QRCode.toString(`${stackUrl()}/trace/${batchId}`, QR_OPTIONS));
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  it('unknown batch: 404 (HTML page for browsers, envelope for JSON); malformed id: 400', async () => {
    const json = await api('GET', '/trace/BATCH-2026-999999', { headers: { accept: 'application/json' } });
    expect([json.status, json.body.error.code]).toEqual([404, 'BATCH_NOT_FOUND']);
    const page = await fetch(`${stackUrl()}/trace/BATCH-2026-999999`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Batch not found');
    const qr = await api('GET', '/trace/BATCH-2026-999999/qr.svg');
    expect([qr.status, qr.body.error.code]).toEqual([404, 'BATCH_NOT_FOUND']);
    const bad = await api('GET', '/trace/nope', { headers: { accept: 'application/json' } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});

describeWithChromium('trace-page')('GET /trace/{id} in headless Chromium', () => {
  it('renders the page with no private field', async () => {
    const dom = await headlessChromium(['--dump-dom'], `${stackUrl()}/trace/${batchId}`, 5_000);
    expect(dom).toContain(`Coffee batch ${batchId}`);
    expect(dom).toContain('Joseph, Mbale');
    expect(dom).toContain('<svg');
    for (const s of privateStrings()) expect(dom).not.toContain(s);
  });

  it.each([
    ['phone', 390, 2300],
    ['desktop', 1280, 1400],
  ])('writes a %s-width screenshot to test-output/', async (name, width, height) => {
    const dir = join(repoRoot(), 'test-output');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `trace-${name}.png`);
    rmSync(file, { force: true });
    await headlessChromium(
      [`--screenshot=${file}`, `--window-size=${width},${height}`, '--hide-scrollbars'],
      `${stackUrl()}/trace/${batchId}`,
      5_000,
    );
    expect(statSync(file).size).toBeGreaterThan(20_000); // a rendered page, not a blank one
  });

  /**
   * Renders the served qr.svg of `id` in Chromium at 400 × 400 px on white with a 40 px quiet
   * zone, screenshots it to test-output/`name`.png and decodes the PNG with jsQR (null: no code found).
   */
  async function decodeServedQr(id: string, name: string): Promise<string | null> {
    const dir = join(repoRoot(), 'test-output');
    mkdirSync(dir, { recursive: true });
    const html = join(dir, `${name}.html`);
    const file = join(dir, `${name}.png`);
    rmSync(file, { force: true });
    writeFileSync(
      html,
      `<!doctype html><html><body style="margin:0;background:#fff"><img src="${stackUrl()}/trace/${id}/qr.svg" style="display:block;margin:40px;width:400px;height:400px"></body></html>`,
    );
    await headlessChromium(
      [`--screenshot=${file}`, '--window-size=480,480', '--force-device-scale-factor=1', '--hide-scrollbars'],
      pathToFileURL(html).href,
      5_000,
    );
    const png = PngImage.sync.read(readFileSync(file));
    return jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)?.data ?? null;
  }

  it("draws a QR code that decodes to the page URL (and another batch's to its own)", async () => {
    // The page URL, as the JSON view's page_url and the page's own link give it (asserted above).
    const pageUrl = `${stackUrl()}/trace/${batchId}`;

    const decoded = await decodeServedQr(batchId, 'trace-qr');
    const other = await decodeServedQr(otherBatchId, 'trace-qr-other');

    expect(decoded).toBe(pageUrl);
    expect(other).toBe(`${stackUrl()}/trace/${otherBatchId}`);
    expect(other).not.toBe(decoded);
  });
});
