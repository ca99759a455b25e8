import { create as createQrCode } from 'qrcode/lib/core/qrcode';
import { render as renderQrSvg } from 'qrcode/lib/renderer/svg-tag';
import type { PublicTrace } from '../use-cases/trace-page';

/**
 * The public trace page (docs/api/trace-page.md#public-trace-page) as HTML, its plot as inline SVG and its QR code. Every
 * value that reaches the HTML goes through `esc` (text and attribute values alike); numbers are
 * formatted here. No template engine, no outside assets, no script: the CSS is in the page (allowed
 * by its hash in the page's CSP), the plot (from coordinates already rounded to 3 decimals) and the
 * QR code are SVG drawn by the service.
 */

/** HTML-escapes text for element content and double- or single-quoted attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The page's absolute URL: the configured base (PUBLIC_BASE_URL, never a request header) and `/trace/{batch_id}`. */
export function tracePageUrl(baseUrl: string, batchId: string): string {
  return `${baseUrl}/trace/${encodeURIComponent(batchId)}`;
}

/** The options the QR code is drawn with (error correction M: a bag's label survives some wear). */
export const QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const;

/**
 * GET /trace/{id}/qr.svg: the QR code of `url` as an SVG document — what `qrcode`'s
 * `toString(url, QR_OPTIONS)` gives, from its encoder and SVG renderer alone (./qrcode-parts.d.ts).
 */
export async function qrSvg(url: string): Promise<string> {
  return renderQrSvg(createQrCode(url, QR_OPTIONS), QR_OPTIONS);
}

const METRES_PER_DEGREE = 111_320;
const PLOT_W = 320;
const PLOT_H = 240;
const PAD = 24;

/**
 * The plot as an SVG drawing: the polygon's rings (holes included, even-odd fill) projected
 * equirectangularly round the plot's centre (x = lng × cos(centre lat), y = −lat), scaled to fit a
 * 320 × 240 box with a margin, with a scale bar and a north arrow. No tiles or basemap.
 */
export function plotSvg(geometry: PublicTrace['plot']['geometry']): string {
  const points = geometry.coordinates.flat();
  const lats = points.map((p) => p[1]!);
  const lngs = points.map((p) => p[0]!);
  const [minLat, maxLat, minLng, maxLng] = [Math.min(...lats), Math.max(...lats), Math.min(...lngs), Math.max(...lngs)];
  const kx = Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
  const spanX = Math.max((maxLng - minLng) * kx, 1e-9);
  const spanY = Math.max(maxLat - minLat, 1e-9);
  const scale = Math.min((PLOT_W - 2 * PAD) / spanX, (PLOT_H - 2 * PAD) / spanY); // px per degree of latitude
  const ox = (PLOT_W - spanX * scale) / 2;
  const oy = (PLOT_H - spanY * scale) / 2;
  const xy = (p: number[]) => `${(ox + (p[0]! - minLng) * kx * scale).toFixed(1)},${(oy + (maxLat - p[1]!) * scale).toFixed(1)}`;
  const path = geometry.coordinates.map((ring) => `M${ring.map(xy).join('L')}Z`).join('');
  // A scale bar of a round length near a quarter of the box.
  const pxPerMetre = scale / METRES_PER_DEGREE;
  const target = PLOT_W / 4 / pxPerMetre;
  const step =
    [1, 2, 5]
      .map((m) => m * 10 ** Math.floor(Math.log10(target)))
      .reverse()
      .find((m) => m <= target) ?? target;
  const barPx = step * pxPerMetre;
  const label = step >= 1000 ? `${step / 1000} km` : `${step} m`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${PLOT_W} ${PLOT_H}" role="img" aria-label="Farm plot outline" class="plot">` +
    `<rect width="${PLOT_W}" height="${PLOT_H}" fill="#eef3e8"/>` +
    `<path d="${path}" fill="#6b8e23" fill-opacity="0.45" stroke="#3b5314" stroke-width="2" fill-rule="evenodd" stroke-linejoin="round"/>` +
    `<g font-family="system-ui,sans-serif" font-size="12" fill="#333"><line x1="12" y1="${PLOT_H - 12}" x2="${(12 + barPx).toFixed(1)}" y2="${PLOT_H - 12}" stroke="#333" stroke-width="3"/>` +
    `<text x="12" y="${PLOT_H - 18}">${esc(label)}</text>` +
    `<text x="${PLOT_W - 18}" y="22" text-anchor="middle" font-weight="bold">N</text><path d="M${PLOT_W - 18} 26l-5 12h10z" fill="#333"/></g></svg>`
  );
}

const STAGE_LABELS: Record<string, string> = {
  DELIVERED: 'Delivered to the cooperative',
  GRADED: 'Graded',
  MILLED: 'Milled',
  WAREHOUSED: 'Warehoused',
  COMMITTED: 'Committed to a buyer',
  EXPORTED: 'Exported',
  SETTLED: 'Settled',
};

/** `2026-11-22T18:54:52.323Z` → `2026-11-22 18:54 UTC`. */
const when = (iso: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso);

function verificationBlock(v: PublicTrace['verification']): string {
  if (v.verified === null) return `<p class="verdict unknown">Verification unavailable: ${esc(v.unavailable_reason ?? '')}</p>`;
  const anchored = `<p class="note">${esc(v.entries_anchored)} of ${esc(v.entries_total)} audit entries anchored on the ledger.</p>`;
  if (v.verified)
    return `<p class="verdict ok">✔ Verified: all ${esc(v.checks_total)} checks passed — the audit trail matches the ledger and the evidence, and every entry is anchored.</p>${anchored}`;
  if (v.awaiting_anchor > 0 && v.awaiting_anchor === v.checks_total - v.checks_passed) {
    return `<p class="verdict pending">Pending: every check passes; ${esc(v.awaiting_anchor)} recent ${v.awaiting_anchor === 1 ? 'entry awaits' : 'entries await'} the next ledger anchor (every few minutes).</p>${anchored}`;
  }
  const failures = v.failures.map((f) => `<li>entry ${esc(f.sequence_number)}: ${esc(f.check.replace(/_/g, ' '))}</li>`).join('');
  return `<p class="verdict bad">✘ Not verified: ${esc(v.checks_total - v.checks_passed)} of ${esc(v.checks_total)} checks failed.</p><ul class="failures">${failures}</ul>${anchored}`;
}

function stageItem(s: PublicTrace['stages'][number], baseUrl: string): string {
  const tx = s.chain_tx_hash
    ? `<div class="kv"><span>Ledger transaction</span><code>${esc(s.chain_tx_hash)}</code></div>`
    : '<div class="kv"><span>Ledger transaction</span><em>pending</em></div>';
  const evidence = s.evidence_ipfs_cid
    ? `<div class="kv"><span>Evidence</span><a href="${esc(`${baseUrl}/ipfs/${encodeURIComponent(s.evidence_ipfs_cid)}`)}"><code>${esc(s.evidence_ipfs_cid)}</code></a></div>`
    : '';
  return `<li><div class="stage"><strong>${esc(STAGE_LABELS[s.stage] ?? s.stage)}</strong><time datetime="${esc(s.at)}">${esc(when(s.at))}</time></div>${tx}${evidence}</li>`;
}

const CSS = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;background:#f6f4ef}
main,header>div{max-width:960px;margin:0 auto;padding:16px}header{background:#4a3426;color:#fff}header h1{margin:0;font-size:1.4em;overflow-wrap:anywhere}header p{margin:.2em 0 0;opacity:.85}
.grid{display:grid;gap:16px;grid-template-columns:minmax(0,1fr)}@media(min-width:760px){.grid{grid-template-columns:repeat(2,minmax(0,1fr))}}
section{min-width:0;background:#fff;border-radius:8px;padding:16px;box-shadow:0 1px 2px rgba(0,0,0,.08)}h2{font-size:1.1em;margin:0 0 .6em}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3em 1em;margin:0}dt{color:#666}dd{margin:0;font-weight:600;min-width:0;overflow-wrap:anywhere}
.plot{width:100%;height:auto;border-radius:6px;display:block}.note{color:#666;font-size:.85em;margin:.4em 0 0}
ol.timeline{list-style:none;margin:0;padding:0;border-left:3px solid #c8b89a}ol.timeline li{position:relative;padding:0 0 14px 16px}
ol.timeline li:before{content:"";position:absolute;left:-8px;top:6px;width:13px;height:13px;border-radius:50%;background:#6b8e23;border:2px solid #fff}
.stage{display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 1em}.stage time{color:#666;font-size:.9em}
.kv{font-size:.85em;display:flex;flex-direction:column}.kv span{color:#666}code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;word-break:break-all;overflow-wrap:anywhere}
a{color:#1f5fa8}.verdict{font-weight:600;padding:.6em .8em;border-radius:6px;margin:0}.ok{background:#e3f3e1;color:#1d5e1a}.bad{background:#fbe4e1;color:#8a1c12}.unknown{background:#f1f1f1;color:#555}.pending{background:#fdf3d8;color:#6b4e00}
.qr{text-align:center}.qr img{width:180px;height:180px;image-rendering:pixelated}footer{color:#777;font-size:.8em;text-align:center;padding:16px}`;

/** GET /trace/{id} as HTML: everything in `view` (already the public view), escaped. */
export function tracePageHtml(view: PublicTrace, baseUrl: string): string {
  const pageUrl = tracePageUrl(baseUrl, view.batch_id);
  const dds = view.dds_reference_number
    ? `${view.dds_status === 'WITHDRAWN' ? '<strong>withdrawn</strong>: no longer valid · <s>' : ''}${esc(view.dds_reference_number)}${view.dds_verification_number ? ` · verification ${esc(view.dds_verification_number)}` : ''}${view.dds_status === 'WITHDRAWN' ? '</s>' : ''}`
    : '<em>not yet available</em>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Coffee batch ${esc(view.batch_id)}</title><style>${CSS}</style></head><body>
<header><div><h1>Coffee batch ${esc(view.batch_id)}</h1><p>${esc(view.cooperative.name)} · ${esc(view.cooperative.district)}</p></div></header>
<main><div class="grid">
<section><h2>The coffee</h2><dl>
<dt>Grade</dt><dd>${esc(view.grade)}</dd><dt>Weight</dt><dd>${esc(view.weight_kg)} kg</dd>
<dt>Cooperative</dt><dd>${esc(view.cooperative.name)}</dd><dt>District</dt><dd>${esc(view.cooperative.district)}</dd>
<dt>Farmer</dt><dd>${esc(view.farmer.first_name)}, ${esc(view.farmer.district)}</dd>
<dt>Stage</dt><dd>${esc(view.stage ?? 'pending')}</dd><dt>EU DDS reference</dt><dd>${dds}</dd>
<dt>BatchToken</dt><dd>#${esc(view.token_id)}</dd></dl></section>
<section><h2>The farm</h2>${plotSvg(view.plot.geometry)}<p class="note">${view.plot.source === 'POLYGON' ? 'Mapped boundary' : 'Registered point, drawn as a circle of the declared area'}; ${esc(view.plot.area_ha)} ha. Coordinates rounded to about 110 m to protect the farm's exact location.</p></section>
<section><h2>Verification</h2>${verificationBlock(view.verification)}<p class="note">The audit trail's hash chain, compared with the BatchToken and trace-log events on the ledger, with the evidence on IPFS, and with each entry's anchor on the ledger.</p></section>
<section><h2>Custody timeline</h2><ol class="timeline">${view.stages.map((s) => stageItem(s, baseUrl)).join('')}</ol></section>
<section class="qr"><h2>This page</h2><img src="${esc(`${pageUrl}/qr.svg`)}" alt="QR code of this page"><p class="note"><a href="${esc(pageUrl)}">${esc(pageUrl)}</a></p></section>
</div></main><footer>Public trace of a coffee batch. Personal data (phone numbers, payments, full names) is never shown.</footer></body></html>`;
}

/** A small HTML error page for browsers (JSON callers get the error envelope). */
export function traceErrorHtml(status: number, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(status)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}</style></head><body><h1>${esc(status === 404 ? 'Batch not found' : 'Bad request')}</h1><p>${esc(message)}</p></body></html>`;
}
