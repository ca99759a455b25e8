import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { publicBaseUrl } from '../../shared/config';
import { DOCS_PAGE_CSP, docsPageHtml, errorsPageHtml, scalarBundle } from '../../shared/http/docs-page';
import { httpHandler, publicRouteOptions } from '../../shared/http/handler';
import { getDocsErrorsRoute, getDocsRoute, getDocsScalarJsRoute } from '../../shared/http/routes/docs';

const html = (requestId: string, body: string, extra: Record<string, string> = {}) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'public, max-age=300', ...extra },
  body,
});

/**
 * GET /docs: the rendered API reference (Scalar, reading /openapi.json); links from PUBLIC_BASE_URL.
 * Its CSP allows no inline script (Scalar is configured by a data attribute) but inline styles,
 * which Scalar injects at run time (`DOCS_PAGE_CSP`).
 */
const page = httpHandler(publicRouteOptions(getDocsRoute), async ({ requestId }) =>
  html(requestId, docsPageHtml(publicBaseUrl()), { 'content-security-policy': DOCS_PAGE_CSP }),
);

/** GET /docs/errors: the error-code reference (`error.docs` links to `#CODE`); links from PUBLIC_BASE_URL, its style allowed by hash. */
const errors = httpHandler(publicRouteOptions(getDocsErrorsRoute), async ({ requestId }) =>
  html(requestId, errorsPageHtml(publicBaseUrl())),
);

/** GET /docs/scalar.js: Scalar's standalone bundle, read from disk (not part of this function's bundle). */
const script = httpHandler(publicRouteOptions(getDocsScalarJsRoute), async ({ requestId }) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/javascript; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'public, max-age=86400' },
  body: scalarBundle(),
}));

/** The documentation routes (public), told apart by the API Gateway resource. */
export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  (event.resource === getDocsErrorsRoute.path ? errors : event.resource === getDocsScalarJsRoute.path ? script : page)(event, context);
