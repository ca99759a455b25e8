import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ulid } from 'ulid';
import { errorResponse } from '../../shared/http/envelope';
import { GATEWAY_TIMEOUT_MS, localLambdaContext } from './lambda-context';

/** Path prefix this route serves. */
export const IPFS_PATH_PREFIX = '/ipfs/';

/** An API Gateway proxy handler's answer (a binary body comes base64 with `isBase64Encoded`). */
interface ProxyResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
}

/** An error in the service's envelope (with its request id), as the gateway answers any route it cannot serve. */
function sendError(res: ServerResponse, code: 'ROUTE_NOT_FOUND' | 'VALIDATION_ERROR', message: string, head: boolean): void {
  const result = errorResponse(code, message, ulid(), { headers: { 'cache-control': 'no-store' } });
  res.writeHead(result.statusCode, { ...result.headers, 'content-length': Buffer.byteLength(result.body) });
  res.end(head ? undefined : result.body);
}

/**
 * The local gateway's `/ipfs/` prefix: every `GET|HEAD /ipfs/{cid}` and `/ipfs/{cid}/{name}` is
 * handed to the get-ipfs function (functions/get-ipfs, the same handler as the AWS routes, reading
 * the own copy of evidence on fauxqs's S3) as an API Gateway proxy event, and its answer is written
 * back — a base64 body decoded to the exact bytes, as API Gateway does with binary media types.
 * A deeper path, an empty segment or another method is 404 ROUTE_NOT_FOUND (evidence directories
 * are flat); bad percent-encoding 400 VALIDATION_ERROR; both in the service's envelope.
 * `load` gives the function's handler (the gateway's loader, metered like every route).
 */
export function ipfsGatewayHandler(
  load: () => Promise<(event: APIGatewayProxyEvent, context: unknown) => Promise<ProxyResult>>,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  return async (req, res, url) => {
    req.resume();
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.setHeader('allow', 'GET, HEAD');
      return sendError(res, 'ROUTE_NOT_FOUND', `No route ${req.method} ${url.pathname}: ${IPFS_PATH_PREFIX} answers GET only.`, false);
    }
    const raw = url.pathname.slice(IPFS_PATH_PREFIX.length).split('/');
    if (raw.at(-1) === '' && raw.length > 1) raw.pop();
    if (raw.length < 1 || raw.length > 2 || raw.some((s) => s === ''))
      return sendError(res, 'ROUTE_NOT_FOUND', `No route GET ${url.pathname}: use /ipfs/{cid} or /ipfs/{cid}/{name}.`, head);
    let params: Record<string, string>;
    try {
      params = { id: decodeURIComponent(raw[0]!), ...(raw[1] ? { name: decodeURIComponent(raw[1]) } : {}) };
    } catch {
      return sendError(res, 'VALIDATION_ERROR', 'The path is not valid percent-encoding.', head);
    }
    const resource = raw[1] ? '/ipfs/{id}/{name}' : '/ipfs/{id}';
    const requestId = randomUUID();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const event = {
      resource,
      path: url.pathname,
      httpMethod: 'GET',
      headers,
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: params,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        stage: 'local',
        requestId,
        httpMethod: 'GET',
        path: url.pathname,
        resourcePath: resource,
        authorizer: null,
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
      },
    } as unknown as APIGatewayProxyEvent;
    const result = await (await load())(event, localLambdaContext('get-ipfs', { awsRequestId: requestId, timeoutMs: GATEWAY_TIMEOUT_MS }));
    const body =
      result.body === undefined
        ? Buffer.alloc(0)
        : result.isBase64Encoded
          ? Buffer.from(result.body, 'base64')
          : Buffer.from(result.body, 'utf8');
    res.writeHead(result.statusCode, { ...(result.headers ?? {}), 'content-length': body.byteLength });
    res.end(head ? undefined : body);
  };
}
