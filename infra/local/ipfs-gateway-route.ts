import type { IncomingMessage, ServerResponse } from 'node:http';
import { CID } from 'multiformats/cid';
import type { PinStore } from '../../shared/domain/ports';

/** Path prefix this route serves. */
export const IPFS_PATH_PREFIX = '/ipfs/';

function sendJson(res: ServerResponse, status: number, body: unknown, head = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(head ? undefined : text);
}

function sendError(res: ServerResponse, status: number, code: string, message: string, head: boolean): void {
  sendJson(res, status, { error: { code, message } }, head);
}

/**
 * A read-only IPFS path gateway over a PinStore, for the local stack (the local gateway routes
 * every GET under `/ipfs/` here):
 * - `GET /ipfs/{cid}/{path}`: the file's raw bytes with the content type from its name
 *   (e.g. `/ipfs/bafy…/evidence.json` → `application/json`);
 * - `GET /ipfs/{cid}` (or `/ipfs/{cid}/`): a directory gives the JSON listing
 *   `{cid, entries: [{name, cid, size}]}` (size in bytes); a file gives its bytes
 *   (`application/octet-stream`, the name being unknown);
 * - unknown CID or path: 404 `{error: {code: 'NOT_FOUND', message}}`; malformed CID or path:
 *   400 `{error: {code: 'VALIDATION_ERROR', message}}`; other methods than GET/HEAD: 405.
 * Content is immutable, so file responses carry `cache-control: public, max-age=29030400,
 * immutable` and `etag: "<cid>[/path]"`. HEAD is answered like GET without a body.
 */
export function ipfsGatewayHandler(store: PinStore): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  return async (req, res, url) => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.setHeader('allow', 'GET, HEAD');
      return sendError(res, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not supported on ${IPFS_PATH_PREFIX}; use GET.`, false);
    }
    if (!url.pathname.startsWith(IPFS_PATH_PREFIX)) return sendError(res, 404, 'NOT_FOUND', `No such path ${url.pathname}.`, head);

    let segments: string[];
    try {
      segments = url.pathname.slice(IPFS_PATH_PREFIX.length).split('/').map((s) => decodeURIComponent(s));
    } catch {
      return sendError(res, 400, 'VALIDATION_ERROR', 'The path is not valid percent-encoding.', head);
    }
    const [cidText = '', ...rest] = segments;
    const parts = rest.filter((s) => s.length > 0);
    if (parts.some((s) => s === '.' || s === '..')) return sendError(res, 400, 'VALIDATION_ERROR', 'Path segments "." and ".." are not allowed.', head);
    let cid: string;
    try {
      cid = CID.parse(cidText).toString();
    } catch {
      return sendError(res, 400, 'VALIDATION_ERROR', `Not a valid CID: ${JSON.stringify(cidText)}.`, head);
    }
    const path = parts.join('/');

    try {
      if (!path) {
        const entries = await store.ls(cid);
        if (entries) return sendJson(res, 200, { cid, entries }, head);
      }
      const file = await store.cat(cid, path || undefined);
      if (!file) return sendError(res, 404, 'NOT_FOUND', `${path ? `${cid}/${path}` : cid} is not available from this gateway.`, head);
      res.writeHead(200, {
        'content-type': file.contentType,
        'content-length': file.bytes.byteLength,
        'cache-control': 'public, max-age=29030400, immutable',
        etag: `"${cid}${path ? `/${path}` : ''}"`,
        'x-ipfs-path': `/ipfs/${cid}${path ? `/${path}` : ''}`,
        'x-content-type-options': 'nosniff',
      });
      res.end(head ? undefined : file.bytes);
    } catch (err) {
      sendError(res, 500, 'INTERNAL_ERROR', `The IPFS store failed: ${(err as Error).message}`, head);
    }
  };
}
