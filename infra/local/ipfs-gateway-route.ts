import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/** Path prefix this route serves. */
export const IPFS_PATH_PREFIX = '/ipfs/';

/** An API Gateway proxy handler's answer (a binary body comes base64 with `isBase64Encoded`). */
interface ProxyResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
}

function sendError(res: ServerResponse, status: number, code: string, message: string, head: boolean): void {
  const text = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(head ? undefined : text);
}

/**
 * The local gateway's `/ipfs/` prefix: every `GET|HEAD /ipfs/{cid}` and `/ipfs/{cid}/{name}` is
 * handed to the get-ipfs function (functions/get-ipfs, the same handler as the AWS routes, reading
 * the own copy of evidence on fauxqs's S3) as an API Gateway proxy event, and its answer is written
 * back — a base64 body decoded to the exact bytes, as API Gateway does with binary media types.
 * A deeper path is 404 ROUTE_NOT_FOUND (evidence directories are flat); other methods 405.
 * `load` gives the function's handler (the gateway's loader, metered like every route).
 */
export function ipfsGatewayHandler(load: () => Promise<(event: APIGatewayProxyEvent, context: unknown) => Promise<ProxyResult>>): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  return async (req, res, url) => {
    req.resume();
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.setHeader('allow', 'GET, HEAD');
      return sendError(res, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not supported on ${IPFS_PATH_PREFIX}; use GET.`, false);
    }
    const raw = url.pathname.slice(IPFS_PATH_PREFIX.length).split('/');
    if (raw.at(-1) === '' && raw.length > 1) raw.pop();
    if (raw.length < 1 || raw.length > 2 || raw.some((s) => s === '')) return sendError(res, 404, 'ROUTE_NOT_FOUND', `No route GET ${url.pathname}: use /ipfs/{cid} or /ipfs/{cid}/{name}.`, head);
    let params: Record<string, string>;
    try {
      params = { id: decodeURIComponent(raw[0]!), ...(raw[1] ? { name: decodeURIComponent(raw[1]) } : {}) };
    } catch {
      return sendError(res, 400, 'VALIDATION_ERROR', 'The path is not valid percent-encoding.', head);
    }
    const resource = raw[1] ? '/ipfs/{id}/{name}' : '/ipfs/{id}';
    const requestId = randomUUID();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const event = {
      resource, path: url.pathname, httpMethod: 'GET', headers, multiValueHeaders: {}, queryStringParameters: null, multiValueQueryStringParameters: null,
      pathParameters: params, stageVariables: null, body: null, isBase64Encoded: false,
      requestContext: { accountId: '000000000000', apiId: 'local', stage: 'local', requestId, httpMethod: 'GET', path: url.pathname, resourcePath: resource, authorizer: null, identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' } },
    } as unknown as APIGatewayProxyEvent;
    const result = await (await load())(event, { awsRequestId: requestId, functionName: 'get-ipfs', getRemainingTimeInMillis: () => 29_000 });
    const body = result.body === undefined ? Buffer.alloc(0) : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
    res.writeHead(result.statusCode, { ...(result.headers ?? {}), 'content-length': body.byteLength });
    res.end(head ? undefined : body);
  };
}
