import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ERROR_CODES } from './error-codes';
import { contentSecurityPolicy } from './security-headers';

/**
 * The API reference pages (issue 11): GET /docs renders /openapi.json with Scalar's standalone
 * bundle, served by the service itself at GET /docs/scalar.js (no CDN, no outside fonts or
 * telemetry); GET /docs/errors is the error-code reference that every `error.docs` link
 * (`<DOCS_BASE_URL>/errors#CODE`) points to.
 */

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** Scalar's configuration: everything expanded so the whole reference is in the page, nothing fetched from elsewhere. */
function scalarConfig(serverUrl: string) {
  return {
    url: `${serverUrl}/openapi.json`,
    withDefaultFonts: false,
    telemetry: false,
    defaultOpenAllTags: true,
    showOperationId: false,
    showDeveloperTools: 'never',
    hideClientButton: true,
    hideDarkModeToggle: true,
    persistAuth: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json',
    metaData: { title: 'Coffee trace API reference' },
  };
}

/**
 * The docs page's Content-Security-Policy: no inline script (none is on the page), scripts from
 * the service only; inline styles allowed because Scalar's bundle injects its stylesheets at run
 * time (`<style>` elements it creates), which no hash can name in advance.
 */
export const DOCS_PAGE_CSP = contentSecurityPolicy({ inlineStyles: 'unsafe-inline' });

/**
 * GET /docs: the page that loads the bundle and points it at the document. No inline script:
 * Scalar's standalone bundle reads its configuration from the `data-configuration` attribute of
 * the `#api-reference` element (a JSON data block, never executed) when it loads.
 */
export function docsPageHtml(serverUrl: string): string {
  const config = JSON.stringify(scalarConfig(serverUrl));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Coffee trace API reference</title>
<style>body{margin:0;font-family:system-ui,sans-serif}.top{padding:.5em 1em;font-size:14px;border-bottom:1px solid #ddd;background:#fafafa}</style></head><body>
<div class="top">Coffee batch traceability and farmer payout API · <a href="${esc(serverUrl)}/openapi.json">openapi.json</a> (OpenAPI 3.1) · <a href="${esc(serverUrl)}/docs/errors">Error codes</a></div>
<script id="api-reference" type="application/json" data-url="${esc(serverUrl)}/openapi.json" data-configuration="${esc(config)}"></script>
<script src="${esc(serverUrl)}/docs/scalar.js"></script>
<noscript>The reference needs JavaScript; the document itself is at <a href="${esc(serverUrl)}/openapi.json">${esc(serverUrl)}/openapi.json</a>.</noscript>
</body></html>`;
}

/** GET /docs/errors: every error code with its HTTP status and meaning; `#CODE` anchors the row. */
export function errorsPageHtml(serverUrl: string): string {
  const rows = Object.entries(ERROR_CODES)
    .map(([code, e]) => `<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td><td>${esc(e.title)}</td></tr>`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Coffee trace API error codes</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4em;text-align:left;vertical-align:top}tr:target{background:#fff3c4}code{background:#f4f4f4;padding:0 .2em}</style></head><body>
<h1 id="errors">Error codes</h1>
<p>Every error is <code>{"error": {"code", "message", "docs", "request_id"}}</code> (with <code>details</code> for some codes); <code>docs</code> links to the code's row below. The operations and which codes each answers: <a href="${esc(serverUrl)}/docs">API reference</a>, <a href="${esc(serverUrl)}/openapi.json">openapi.json</a>.</p>
<table><tr><th>Code</th><th>HTTP</th><th>Meaning</th></tr>
${rows}</table></body></html>`;
}

/**
 * Where Scalar's standalone bundle sits in a Lambda layer (`/opt/<this>`): the docs function's
 * layer of static files (infra/bundling.ts FUNCTION_LAYER_FILES), kept out of the function's own
 * code asset, whose size the bundle budget counts.
 */
export const SCALAR_LAYER_FILE = 'scalar/standalone.js';
/** Where Lambda mounts layers. */
const LAYER_ROOT = '/opt';
const SCALAR_IN_NODE_MODULES = 'node_modules/@scalar/api-reference/dist/browser/standalone.js';

let scalar: string | undefined;

/**
 * Scalar's standalone bundle (about 4 MB, never inlined into a function bundle): in Lambda the
 * copy in the docs function's layer (`/opt/scalar/standalone.js`), locally (the local stack runs
 * handlers in-process from the repository) the package's file in the nearest node_modules at or
 * above the working directory. Read once. `layerRoot` is for tests.
 * @throws Error when neither exists.
 */
export function scalarBundle(layerRoot = LAYER_ROOT): string {
  if (scalar !== undefined) return scalar;
  const candidates: string[] = [join(layerRoot, SCALAR_LAYER_FILE)];
  for (let dir = resolve(process.cwd()); ; dir = dirname(dir)) {
    candidates.push(join(dir, SCALAR_IN_NODE_MODULES));
    if (dirname(dir) === dir) break;
  }
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`Scalar's standalone bundle not found (looked in ${candidates.slice(0, 3).join(', ')}, …)`);
  scalar = readFileSync(found, 'utf8');
  return scalar;
}
