import { httpHandler } from '../../shared/http/handler';
import { openApiDocument } from '../../shared/http/openapi';
import { serverBaseUrl } from '../../shared/http/request-url';

let cached: { url: string; doc: unknown } | undefined;

/** GET /openapi.json: the OpenAPI 3.1 document (public). */
export const handler = httpHandler({ public: true }, async ({ headers, requestContextPath }) => {
  const url = serverBaseUrl(headers, requestContextPath);
  if (cached?.url !== url) cached = { url, doc: openApiDocument(url) };
  return { status: 200, body: cached.doc, headers: { 'cache-control': 'public, max-age=300' } };
});
