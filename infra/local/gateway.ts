import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { newUlid } from '../../shared/domain/ids';
import { errorResponse, type HttpResult } from '../../shared/http/envelope';
import { AUTHORIZER_FN, type RouteDef } from '../../shared/manifest';
import { GATEWAY_TIMEOUT_MS, localLambdaContext } from './lambda-context';
import { listenOnLoopback } from './loopback';

/**
 * The local API Gateway: maps HTTP requests to the route handlers through the same route table
 * the CDK stack uses, runs the same Lambda REQUEST authorizer code in front of every `jwt` route,
 * and answers what API Gateway itself would answer (unknown route 404 ROUTE_NOT_FOUND, missing or
 * bad token 401 UNAUTHORIZED, body over 10 MiB 413, throttling 429) in the service's envelope.
 * Extra paths it serves: `/.well-known/jwks.json` (the local token issuer's keys) and anything
 * passed in `extraRoutes`.
 */

export type ProxyHandler = (event: APIGatewayProxyEvent, context: unknown) => Promise<HttpResult>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: unknown) => Promise<APIGatewayAuthorizerResult>;

/** API Gateway's own payload limit. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  route: RouteDef;
  pattern: RegExp;
  names: string[];
}

/** Token bucket per subject: `rate` tokens per second, up to `burst` (docs/api/conventions.md#http-and-errors). */
class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {}
  take(key: string): number {
    const now = Date.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - b.tokens) / this.rate);
  }
}

/**
 * Percent-decodes the captured path segments by name. A malformed escape (`%E0%A4%A`, a lone
 * `%`, invalid UTF-8) gives `{invalid: name}`: the gateway answers 400 VALIDATION_ERROR in the
 * service's envelope rather than crashing (docs/api/conventions.md#http-and-errors: no input gets a 5xx).
 */
export function decodePathParameters(names: string[], values: string[]): { params: Record<string, string> } | { invalid: string } {
  const params: Record<string, string> = {};
  for (const [i, name] of names.entries()) {
    try {
      params[name] = decodeURIComponent(values[i] ?? '');
    } catch {
      return { invalid: name };
    }
  }
  return { params };
}

export interface Gateway {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startGateway(opts: {
  port: number;
  host?: string;
  routes: RouteDef[];
  loadHandler: (fn: string) => Promise<ProxyHandler>;
  authorizer: AuthorizerHandler;
  extraRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>>;
  /** Extra handlers by path prefix (e.g. `/ipfs/`), any method. */
  extraPrefixes?: Record<string, (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>>;
  rateLimit?: { rate: number; burst: number };
  log?: (line: string) => void;
}): Promise<Gateway> {
  const compiled: CompiledRoute[] = opts.routes.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/\{(\w+)\}/g, (_, n: string) => {
      names.push(n);
      return '([^/]+)';
    });
    return { route, pattern: new RegExp(`^${source}$`), names };
  });
  const limiter = new RateLimiter(opts.rateLimit?.rate ?? 50, opts.rateLimit?.burst ?? 100);
  const handlers = new Map<string, Promise<ProxyHandler>>();
  const handlerFor = (fn: string) => {
    let h = handlers.get(fn);
    if (!h) {
      h = opts.loadHandler(fn);
      handlers.set(fn, h);
    }
    return h;
  };

  const write = (res: ServerResponse, r: HttpResult) => {
    res.writeHead(r.statusCode, r.headers);
    res.end(r.body);
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://local');
    const gatewayRequestId = newUlid();
    const extra = opts.extraRoutes?.[url.pathname];
    if (extra && req.method === 'GET') return extra(req, res, url);
    for (const [prefix, h] of Object.entries(opts.extraPrefixes ?? {})) if (url.pathname.startsWith(prefix)) return h(req, res, url);

    const method = req.method ?? 'GET';
    let match: { c: CompiledRoute; values: string[] } | undefined;
    for (const c of compiled) {
      if (c.route.method !== method) continue;
      const m = c.pattern.exec(url.pathname);
      if (m) {
        match = { c, values: m.slice(1) };
        break;
      }
    }
    if (!match) {
      req.resume();
      return write(
        res,
        errorResponse('ROUTE_NOT_FOUND', `No route ${method} ${url.pathname}. See /docs for the API reference.`, gatewayRequestId),
      );
    }
    const decoded = decodePathParameters(match.c.names, match.values);
    if ('invalid' in decoded) {
      req.resume();
      return write(
        res,
        errorResponse(
          'VALIDATION_ERROR',
          `Invalid path parameter: path.${decoded.invalid}: malformed percent-encoding.`,
          gatewayRequestId,
          {
            details: [
              { path: `path.${decoded.invalid}`, message: 'malformed percent-encoding (each % must start a valid UTF-8 %XX sequence)' },
            ],
          },
        ),
      );
    }
    const params = decoded.params;

    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_PAYLOAD_BYTES) {
        write(res, errorResponse('PAYLOAD_TOO_LARGE', `Request bodies are limited to ${MAX_PAYLOAD_BYTES} bytes.`, gatewayRequestId));
        req.destroy();
        return;
      }
      chunks.push(c as Buffer);
    }
    const body = chunks.length ? Buffer.concat(chunks).toString('utf8') : null;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const query = Object.fromEntries(url.searchParams.entries());
    const route = match.c.route;
    const apiRequestId = randomUUID();

    let authorizer: Record<string, unknown> | null = null;
    if (route.auth === 'jwt') {
      try {
        const result = await opts.authorizer(
          {
            type: 'REQUEST',
            methodArn: `arn:aws:execute-api:local:000000000000:local/local/${method}${route.path}`,
            resource: route.path,
            path: url.pathname,
            httpMethod: method,
            headers,
            multiValueHeaders: {},
            pathParameters: params,
            queryStringParameters: query,
            multiValueQueryStringParameters: {},
            stageVariables: {},
            requestContext: {} as never,
          },
          localLambdaContext(AUTHORIZER_FN),
        );
        const allowed = result.policyDocument.Statement.some((s) => (s as { Effect: string }).Effect === 'Allow');
        if (!allowed) throw new Error('Unauthorized');
        authorizer = { ...(result.context ?? {}), principalId: result.principalId };
      } catch {
        return write(res, errorResponse('UNAUTHORIZED', 'Missing or invalid Bearer token.', gatewayRequestId));
      }
    }
    const subject = String(authorizer?.principalId ?? req.socket.remoteAddress ?? 'anonymous');
    const wait = limiter.take(subject);
    if (wait > 0)
      return write(
        res,
        errorResponse('RATE_LIMITED', 'Rate limit exceeded: 50 requests/s per token, bursts of 100.', gatewayRequestId, {
          headers: { 'retry-after': String(wait) },
        }),
      );

    const event = {
      resource: route.path,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders: {},
      queryStringParameters: Object.keys(query).length ? query : null,
      multiValueQueryStringParameters: null,
      pathParameters: Object.keys(params).length ? params : null,
      stageVariables: null,
      body,
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        stage: 'local',
        requestId: apiRequestId,
        httpMethod: method,
        path: url.pathname,
        resourcePath: route.path,
        resourceId: route.fn,
        protocol: 'HTTP/1.1',
        requestTimeEpoch: started,
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' } as never,
        authorizer,
      },
    } as unknown as APIGatewayProxyEvent;
    const context = localLambdaContext(route.fn, { awsRequestId: apiRequestId, timeoutMs: GATEWAY_TIMEOUT_MS });
    let result: HttpResult;
    try {
      result = await (await handlerFor(route.fn))(event, context);
    } catch (err) {
      opts.log?.(`handler ${route.fn} crashed: ${(err as Error).stack ?? String(err)}`);
      result = errorResponse('INTERNAL_ERROR', 'Unexpected server error; contact support with the request_id.', gatewayRequestId);
    }
    write(res, result);
    opts.log?.(`${method} ${url.pathname} ${result.statusCode} ${Date.now() - started}ms`);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      opts.log?.(`gateway error: ${(err as Error).stack ?? String(err)}`);
      if (!res.headersSent) write(res, errorResponse('INTERNAL_ERROR', 'Unexpected gateway error.', newUlid()));
    });
  });
  server.keepAliveTimeout = 5000;
  const listening = await listenOnLoopback(server, opts.port, opts.host ?? '127.0.0.1');
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${listening.port}`,
    port: listening.port,
    stop: () => listening.close(),
  };
}
