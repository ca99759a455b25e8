import { ddsReadDeps, ddsXmlInlineMaxBytes } from '../../shared/composition/eudr';
import { now } from '../../shared/composition/platform';
import { jsonResponse } from '../../shared/http/envelope';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getDdsXmlRoute } from '../../shared/http/routes/eudr';
import { ddsXmlLinkView } from '../../shared/http/views';
import { readDdsXml } from '../../shared/use-cases/eudr';

/**
 * GET /eudr/dds/{id}/xml: the SubmitDdsRequest XML (from the private document store), for an importer
 * who files it themself (docs/api/eudr.md#large-statements). Up to DDS_XML_INLINE_MAX_BYTES it is the
 * body (an attachment); a larger one is 303 See Other: `Location` a presigned URL of the kept document
 * (5 minutes), the body `{dds_id, xml_url, size_bytes, sha256, expires_at}` for clients that do not
 * follow redirects. Never cached.
 */
export const handler = httpHandler(routeOptions(getDdsXmlRoute), async ({ caller, params, requestId }) => {
  const dds = await readDdsXml(ddsReadDeps(), caller, params.id ?? '', { inlineMaxBytes: ddsXmlInlineMaxBytes(), now: now() });
  if (dds.kind === 'link') return jsonResponse(303, ddsXmlLinkView(dds), requestId, { location: dds.xml_url, 'cache-control': 'no-store' });
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/xml; charset=utf-8',
      'x-request-id': requestId,
      'content-disposition': `attachment; filename="${dds.dds_id}.xml"`,
    },
    body: dds.xml,
  };
});
