import { evidenceArchive } from '../../shared/composition/evidence';
import { errorResponse, jsonResponse, type HttpResult } from '../../shared/http/envelope';
import { httpHandler } from '../../shared/http/handler';
import { IpfsParams } from '../../shared/http/path-params';
import { readIpfsPath } from '../../shared/use-cases/ipfs-read';

/** Content under a CID never changes: cache it for a year (as IPFS gateways do). */
const IMMUTABLE = 'public, max-age=29030400, immutable';

/**
 * GET /ipfs/{cid} and GET /ipfs/{cid}/{name} (public, read-only; decisions §14): evidence (or a
 * DDS) from the service's own copy, whatever its pin status. A directory: 200 JSON
 * `{cid, entries: [{name, cid, size}]}`; a file: 200 with its exact bytes (base64 through API
 * Gateway, binary to the client), the content type of its name; unknown CID or name: 404
 * ROUTE_NOT_FOUND; a malformed CID: 400 VALIDATION_ERROR. Answers carry immutable caching
 * headers and `etag: "<cid>[/name]"`.
 */
export const handler = httpHandler({ public: true, params: IpfsParams }, async ({ params, requestId }) => {
  const content = await readIpfsPath(evidenceArchive(), params.cid!, params.name ?? '');
  const where = `${params.cid}${params.name ? `/${params.name}` : ''}`;
  if (!content) return errorResponse('ROUTE_NOT_FOUND', `${where} is not in this service's evidence store.`, requestId, { headers: { 'cache-control': 'no-store' } });
  const common = { 'cache-control': IMMUTABLE, etag: `"${where}"`, 'x-ipfs-path': `/ipfs/${where}` };
  if (content.kind === 'directory') return jsonResponse(200, { cid: content.cid, entries: content.entries }, requestId, common);
  const file: HttpResult & { isBase64Encoded: boolean } = {
    statusCode: 200,
    headers: { 'content-type': content.contentType, 'x-request-id': requestId, 'x-content-type-options': 'nosniff', ...common },
    body: Buffer.from(content.bytes).toString('base64'),
    isBase64Encoded: true,
  };
  return file;
});
