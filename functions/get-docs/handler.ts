import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { docsPageHtml, errorsPageHtml, scalarBundle } from '../../shared/http/docs-page';
import { httpHandler } from '../../shared/http/handler';
import { serverBaseUrl } from '../../shared/http/request-url';

const html = (requestId: string, body: string) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'public, max-age=300' },
  body,
});

/** GET /docs: the rendered API reference (Scalar, reading /openapi.json). */
const page = httpHandler({ public: true }, async ({ headers, requestId, requestContextPath }) => html(requestId, docsPageHtml(serverBaseUrl(headers, requestContextPath))));

/** GET /docs/errors: the error-code reference (`error.docs` links to `#CODE`). */
const errors = httpHandler({ public: true }, async ({ headers, requestId, requestContextPath }) => html(requestId, errorsPageHtml(serverBaseUrl(headers, requestContextPath))));

/** GET /docs/scalar.js: Scalar's standalone bundle, read from disk (not part of this function's bundle). */
const script = httpHandler({ public: true }, async ({ requestId }) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/javascript; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'public, max-age=86400' },
  body: scalarBundle(),
}));

/** The documentation routes (public), told apart by the API Gateway resource. */
export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  (event.resource === '/docs/errors' ? errors : event.resource === '/docs/scalar.js' ? script : page)(event, context);
