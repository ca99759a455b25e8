import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { evidenceArchive } from '../../shared/composition/batches';
import { errorResponse, jsonResponse, type HttpResult } from '../../shared/http/envelope';
import { httpHandler, publicRouteOptions, type HttpRequest } from '../../shared/http/handler';
import { getIpfsNameRoute, getIpfsRoute } from '../../shared/http/routes/reference';
import type { AnonymousCaller } from '../../shared/domain/caller';
import { readIpfsPath } from '../../shared/use-cases/ipfs-read';

/** Content under a CID never changes: cache it for a year (as IPFS gateways do). */
const IMMUTABLE = 'public, max-age=29030400, immutable';
/** Text files up to this size are answered inline; larger or binary files by redirect. */
const INLINE_TEXT_BYTES = 1_048_576;

/** The file's bytes as UTF-8 text when they are exactly that (so API Gateway passes them unchanged); else undefined. */
function asText(bytes: Uint8Array, contentType: string): string | undefined {
  if (bytes.byteLength > INLINE_TEXT_BYTES || !/^(application\/(json|xml)|text\/)/.test(contentType)) return undefined;
  const text = Buffer.from(bytes).toString('utf8');
  return Buffer.from(text, 'utf8').equals(Buffer.from(bytes)) ? text : undefined;
}

/**
 * GET /ipfs/{cid} and GET /ipfs/{cid}/{name} (public, read-only; docs/api/evidence.md#evidence-on-ipfs): a stage's public
 * evidence package from the service's own copy, whatever its pin status; a CID of anything else
 * (a due diligence statement is private) is 404 exactly like an unknown one. A directory: 200 JSON
 * `{cid, entries: [{name, cid, size}]}`. A text file (evidence.json): 200 with
 * its exact bytes and the content type of its name. A photo (or any other file): 302 to a
 * presigned URL of the own copy's object (valid 5 minutes) that answers its exact bytes — no
 * base64 through API Gateway, and no limit from Lambda's 6 MB answers. Unknown CID or name: 404
 * ROUTE_NOT_FOUND; a malformed CID: 400 VALIDATION_ERROR. Listings and text files carry immutable
 * caching headers and `etag: "<cid>[/name]"`.
 */
async function serve({ params, requestId }: HttpRequest<undefined, AnonymousCaller>): Promise<HttpResult> {
  const content = await readIpfsPath(evidenceArchive(), params.id!, params.name ?? '');
  const where = `${params.id}${params.name ? `/${params.name}` : ''}`;
  if (!content)
    return errorResponse('ROUTE_NOT_FOUND', `${where} is not in this service's evidence store.`, requestId, {
      headers: { 'cache-control': 'no-store' },
    });
  const common = { 'cache-control': IMMUTABLE, etag: `"${where}"`, 'x-ipfs-path': `/ipfs/${where}` };
  if (content.kind === 'directory') return jsonResponse(200, { cid: content.cid, entries: content.entries }, requestId, common);
  const text = asText(content.bytes, content.contentType);
  if (text !== undefined) {
    return {
      statusCode: 200,
      headers: { 'content-type': content.contentType, 'x-request-id': requestId, 'x-content-type-options': 'nosniff', ...common },
      body: text,
    };
  }
  const redirect: HttpResult = {
    statusCode: 302,
    headers: {
      location: await evidenceArchive().fileUrl(content.cid, content.path),
      'cache-control': 'no-store',
      'x-request-id': requestId,
      'x-ipfs-path': `/ipfs/${where}`,
    },
    body: '',
  };
  return redirect;
}

const listing = httpHandler(publicRouteOptions(getIpfsRoute), serve);
const file = httpHandler(publicRouteOptions(getIpfsNameRoute), serve);

/** The two routes, told apart by the `name` path parameter (GET /ipfs/{cid}/{name} has it). */
export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  (event.pathParameters?.name === undefined ? listing : file)(event, context);
