import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { tracePageDeps } from '../../shared/composition/audit';
import { publicBaseUrl } from '../../shared/config';
import { DomainError } from '../../shared/domain/errors';
import { jsonResponse } from '../../shared/http/envelope';
import { httpHandler, publicRouteOptions } from '../../shared/http/handler';
import { getTraceQrSvgRoute, getTraceRoute } from '../../shared/http/routes/reference';
import { qrSvg, traceErrorHtml, tracePageHtml, tracePageUrl } from '../../shared/http/trace-page';
import { assertPublicBatch, readPublicTrace } from '../../shared/use-cases/trace-page';

/** Stages change: a minute of caching at most. */
const CACHE = 'public, max-age=60';

/** JSON when the caller asks for JSON and not for HTML (browsers ask for text/html). */
const wantsJson = (accept = '') => /application\/json/i.test(accept) && !/text\/html/i.test(accept);
/** Error pages in HTML only for callers that name text/html (browsers); everyone else gets the error envelope. */
const namesHtml = (accept = '') => /text\/html/i.test(accept);

/**
 * GET /trace/{id} (public, docs/api/trace-page.md#public-trace-page): the batch's public trace — an HTML page, or with
 * `Accept: application/json` the same view as JSON with `page_url` and `qr_url`. Unknown batch:
 * 404 BATCH_NOT_FOUND (an HTML page when Accept names text/html, else the envelope); a malformed id: 400
 * VALIDATION_ERROR. Links are absolute, built from PUBLIC_BASE_URL only (never from `Host` or
 * `X-Forwarded-*`); the HTML carries a CSP without inline script (shared/http/security-headers.ts).
 */
const page = httpHandler(publicRouteOptions(getTraceRoute), async ({ params, headers, requestId }) => {
  const json = wantsJson(headers.accept);
  try {
    const view = await readPublicTrace(tracePageDeps(), params.id!);
    const base = publicBaseUrl();
    const pageUrl = tracePageUrl(base, view.batch_id);
    if (json)
      return jsonResponse(200, { ...view, page_url: pageUrl, qr_url: `${pageUrl}/qr.svg` }, requestId, {
        'cache-control': CACHE,
        vary: 'Accept',
      });
    return {
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, 'cache-control': CACHE, vary: 'Accept' },
      body: tracePageHtml(view, base),
    };
  } catch (err) {
    if (!namesHtml(headers.accept) || !(err instanceof DomainError) || err.code !== 'BATCH_NOT_FOUND') throw err;
    return {
      statusCode: 404,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'no-store', vary: 'Accept' },
      body: traceErrorHtml(404, err.message),
    };
  }
});

/** GET /trace/{id}/qr.svg: the QR code of the page's absolute URL (PUBLIC_BASE_URL); 404 BATCH_NOT_FOUND for an unknown batch. */
const qr = httpHandler(publicRouteOptions(getTraceQrSvgRoute), async ({ params, requestId }) => {
  await assertPublicBatch(tracePageDeps().batches, params.id!);
  return {
    statusCode: 200,
    headers: { 'content-type': 'image/svg+xml', 'x-request-id': requestId, 'cache-control': 'public, max-age=86400' },
    body: await qrSvg(tracePageUrl(publicBaseUrl(), params.id!)),
  };
});

/** The trace routes (public), told apart by the API Gateway resource. */
export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  (event.resource === getTraceQrSvgRoute.path ? qr : page)(event, context);
