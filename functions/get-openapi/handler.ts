import { httpHandler, publicRouteOptions } from '../../shared/http/handler';
import { getOpenapiRoute } from '../../shared/http/routes/reference';
import { openApiDocument } from '../../shared/http/openapi';
import { publicBaseUrl } from '../../shared/config';

let cached: { url: string; doc: unknown } | undefined;

/** GET /openapi.json: the OpenAPI 3.1 document (public); its server is PUBLIC_BASE_URL. */
export const handler = httpHandler(publicRouteOptions(getOpenapiRoute), async () => {
  const url = publicBaseUrl();
  if (cached?.url !== url) cached = { url, doc: openApiDocument(url) };
  return { status: 200, body: cached.doc, headers: { 'cache-control': 'public, max-age=300' } };
});
