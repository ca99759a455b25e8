import { defineRoute } from './define';

/**
 * The documentation pages' routes (public HTML and the renderer's script). Kept apart from the
 * other reference routes so the docs function's bundle carries no view schemas (docs/bundles.md).
 */

/** /docs */
export const getDocsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/docs',
  fn: 'get-docs',
  auth: 'public',
  needs: [],
  summary: 'The rendered API reference (Scalar, from /openapi.json).',
  success: [
    {
      status: '200',
      description: 'The rendered API reference (HTML).',
      contentType: 'text/html',
      schema: { type: 'string' },
      example: '<!doctype html><html lang="en">…</html>',
    },
  ],
});

/** /docs/errors */
export const getDocsErrorsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/docs/errors',
  fn: 'get-docs',
  auth: 'public',
  needs: [],
  summary: 'The error-code reference: every code with its HTTP status (error.docs links to #CODE).',
  success: [
    {
      status: '200',
      description: "The error-code reference (HTML); each code's row is anchored `#CODE`.",
      contentType: 'text/html',
      schema: { type: 'string' },
      example: '<!doctype html><html lang="en">…<tr id="BATCH_NOT_FOUND"><td><code>BATCH_NOT_FOUND</code></td><td>404</td>…</html>',
    },
  ],
});

/** /docs/scalar.js */
export const getDocsScalarJsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/docs/scalar.js',
  fn: 'get-docs',
  auth: 'public',
  needs: [],
  summary: 'The API reference renderer (Scalar standalone bundle, served by the service: no CDN).',
  success: [
    {
      status: '200',
      description: "Scalar's standalone API reference bundle (JavaScript).",
      contentType: 'text/javascript',
      schema: { type: 'string' },
      example: '/* Scalar API reference standalone bundle */',
    },
  ],
});
