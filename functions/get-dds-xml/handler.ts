import { ddsReadDeps } from '../../shared/composition/eudr';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getDdsXmlRoute } from '../../shared/http/routes/eudr';
import { readDdsXml } from '../../shared/use-cases/eudr';

/** GET /eudr/dds/{id}/xml: the SubmitDdsRequest XML (from the private document store), for an importer who files it themself. */
export const handler = httpHandler(routeOptions(getDdsXmlRoute), async ({ caller, params, requestId }) => {
  const dds = await readDdsXml(ddsReadDeps(), caller, params.id ?? '');
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
