import { httpHandler } from '../../shared/http/handler';
import { docsHtml } from '../../shared/http/openapi';
import { serverBaseUrl } from '../../shared/http/request-url';

/** GET /docs: the rendered API reference with the error-code reference (public). */
export const handler = httpHandler({ public: true }, async ({ headers, requestId, requestContextPath }) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'public, max-age=300' },
  body: docsHtml(serverBaseUrl(headers, requestContextPath)),
}));
