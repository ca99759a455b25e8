import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { routes } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { api, stackUrl } from '../support/api';
import { describeWithChromium, headlessChromium } from '../support/chromium';

/**
 * GET /docs of the local stack opened in headless Chromium (issue 11): the reference rendered by
 * the service's own copy of Scalar lists every route (method and path), and a screenshot is
 * written to test-output/docs.png. Needs Debian's `chromium`; where it is absent the browser
 * tests are skipped with a message saying how to install it.
 */

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");

describeWithChromium('docs-browser')('GET /docs in headless Chromium', () => {
  it("renders every route (method and path) with the service's own Scalar bundle", async () => {
    // Act
    const dom = await headlessChromium(['--dump-dom'], `${stackUrl()}/docs`);

    // Assess: the endpoint lists Scalar renders, `<span class="… endpoint-method …">get</span><span class="endpoint-path">/x</span>`
    const rendered = new Set(
      [...dom.matchAll(/class="[^"]*endpoint-method[^"]*"[^>]*>([^<]*)<\/span><span[^>]*class="endpoint-path"[^>]*>([^<]*)<\/span>/g)].map(
        (m) => `${m[1]!.trim().toUpperCase()} ${unescapeHtml(m[2]!)}`,
      ),
    );
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((r) => !rendered.has(r));
    expect(missing).toEqual([]);
    expect(dom).toContain('Coffee batch traceability and farmer payout API');
    expect(dom).toContain(`src="${stackUrl()}/docs/scalar.js"`);
  });

  it('writes a screenshot to test-output/docs.png', async () => {
    const dir = join(repoRoot(), 'test-output');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'docs.png');
    rmSync(file, { force: true });

    await headlessChromium([`--screenshot=${file}`, '--window-size=1400,1800', '--hide-scrollbars'], `${stackUrl()}/docs`);

    expect(statSync(file).size).toBeGreaterThan(50_000); // a rendered page, not a blank one
  });
});

describe('the documentation routes', () => {
  it('serve the Scalar bundle from the service and the error reference that error.docs links to', async () => {
    const script = await fetch(`${stackUrl()}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect((await script.text()).length).toBeGreaterThan(1_000_000);

    const notFound = await api('GET', '/batch/BATCH-2026-999999', { token: undefined });
    expect(notFound.status).toBe(401);
    const link = new URL(notFound.body.error.docs as string);
    expect(link.hash).toBe('#UNAUTHORIZED');
    const errorsPage = await fetch(link.href.replace(link.hash, ''));
    expect(errorsPage.status).toBe(200);
    const page = await errorsPage.text();
    for (const [code, e] of Object.entries(ERROR_CODES))
      expect(page).toContain(`<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td>`);
  });
});
